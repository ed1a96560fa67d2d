import { setTimeout as sleep } from 'node:timers/promises';
import { UpstreamHttpError, UpstreamUnreachableError } from '../../domain/upstream-failure.ts';

/**
 * Words in a sandbox job's prompt that make the job misbehave on purpose, so a client's handling of failures,
 * long jobs and cancellations can be tried deterministically (docs/sandbox.md):
 * - `sandbox-fail`: the provider refuses the job; it fails with that reason and nothing is charged;
 * - `sandbox-slow`: the job stays processing until its time limit (`jobs.maxJobSeconds`) cuts it;
 *   `sandbox-slow-N` (N from 1 to 3600): it stays processing N seconds, then succeeds;
 * - `sandbox-cancel`: the provider cancels the job (a video task ends `cancelled`; image and audio jobs,
 *   which have no cancelled state, fail saying so); nothing is charged.
 */
export type JobTrigger = { kind: 'fail' } | { kind: 'cancel' } | { kind: 'slow'; seconds: number | undefined };

const maxSlowSeconds = 3600;
const triggerPattern = /(?<![\w-])sandbox-(fail|cancel|slow)(?:-(\d{1,4}))?(?![\w-])/i;

/** The first trigger word of the prompt, if any. */
export function jobTrigger(prompt: string): JobTrigger | undefined {
  const match = triggerPattern.exec(prompt);
  if (!match) return undefined;
  const word = match[1]!.toLowerCase();
  if (word === 'fail' || word === 'cancel') return match[2] === undefined ? { kind: word } : undefined;
  const seconds = match[2] === undefined ? undefined : Number(match[2]);
  if (seconds !== undefined && (seconds < 1 || seconds > maxSlowSeconds)) return undefined;
  return { kind: 'slow', seconds };
}

export const failedOnPurpose = 'the prompt asked the sandbox to fail (sandbox-fail)';
export const cancelledOnPurpose = 'the sandbox cancelled the job, as the prompt asked (sandbox-cancel)';

/** A refusal in the shape upstream errors take, so the job's error reads "the provider answered 400: ...". */
function refusal(message: string): UpstreamHttpError {
  return new UpstreamHttpError(
    400,
    JSON.stringify({ error: { message, type: 'invalid_request_error', code: 'sandbox_trigger' } }),
    { contentType: 'application/json' },
  );
}

/**
 * Acts out the trigger of a job that answers in one call (images, audio): throws the refusal of `fail` and
 * `cancel`; for `slow` waits its seconds, or until the job's deadline (`signal`) when it names none.
 */
export async function actOutTrigger(trigger: JobTrigger | undefined, signal: AbortSignal | undefined): Promise<void> {
  if (!trigger) return;
  if (trigger.kind === 'fail') throw refusal(failedOnPurpose);
  if (trigger.kind === 'cancel') throw refusal(cancelledOnPurpose);
  const waited = sleep(trigger.seconds === undefined ? 2 ** 31 - 1 : trigger.seconds * 1000, undefined, { signal });
  await waited.catch(() => {
    throw new UpstreamUnreachableError(
      'timeout',
      'the sandbox was still generating (sandbox-slow) when the job was cut',
    );
  });
}
