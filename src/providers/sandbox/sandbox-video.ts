import { createHash } from 'node:crypto';
import { Type, type Static } from 'typebox';
import type { VideoGenerationRequest, VideoTaskReport } from '../../domain/video.ts';
import {
  keyFrame,
  pictureParameterSet,
  planeSizes,
  repeatFrame,
  sequenceParameterSet,
  type PictureSize,
} from './h264-pcm.ts';
import { mp4File } from './mp4.ts';
import type { VideoAdapter } from '../provider-adapter.ts';
import { refuseMaxTokens } from '../shared/video-checks.ts';
import { wireCheck } from '../../protocols/wire-check.ts';
import { cancelledOnPurpose, failedOnPurpose, jobTrigger } from './job-triggers.ts';

/** Frames per second, and a key frame (a new picture) at the start of each second. */
const framesPerSecond = 8;
/** How long a sandbox task is `running` before it has its video. */
const renderMs = 300;
const defaultSeconds = 5;
const maxSeconds = 60;

/** Picture sizes by ratio, small enough to make in a millisecond. */
const sizes: Record<string, PictureSize> = {
  '16:9': { width: 128, height: 72 },
  '9:16': { width: 72, height: 128 },
  '1:1': { width: 96, height: 96 },
  '4:3': { width: 96, height: 72 },
  '3:4': { width: 72, height: 96 },
  '21:9': { width: 168, height: 72 },
};

/** Everything the video depends on travels in the task id, so any gateway process can poll it. */
const SandboxTask = Type.Object({
  seed: Type.String(),
  seconds: Type.Integer(),
  ratio: Type.String(),
  resolution: Type.Optional(Type.String()),
  startedAt: Type.Number(),
  /** What a trigger word of the prompt makes of the task (job-triggers.ts). */
  trigger: Type.Optional(
    Type.Union([
      Type.Object({ kind: Type.Literal('fail') }),
      Type.Object({ kind: Type.Literal('cancel') }),
      Type.Object({ kind: Type.Literal('slow'), seconds: Type.Optional(Type.Integer()) }),
    ]),
  ),
});
type SandboxTask = Static<typeof SandboxTask>;
const isSandboxTask = wireCheck(SandboxTask);

function encodeTask(task: SandboxTask): string {
  return `sandbox-${Buffer.from(JSON.stringify(task)).toString('base64url')}`;
}

function decodeTask(taskId: string): SandboxTask | undefined {
  if (!taskId.startsWith('sandbox-')) return undefined;
  try {
    const task: unknown = JSON.parse(Buffer.from(taskId.slice('sandbox-'.length), 'base64url').toString('utf8'));
    return isSandboxTask(task) ? task : undefined;
  } catch {
    return undefined;
  }
}

/** How long the task runs: the render time, a slow trigger's seconds, or (a bare slow trigger) until cancelled. */
function runningMs(task: SandboxTask): number {
  if (task.trigger?.kind !== 'slow') return renderMs;
  return task.trigger.seconds === undefined ? Number.POSITIVE_INFINITY : task.trigger.seconds * 1000;
}

/** A deterministic clip: a colour field from the prompt, with a bright band that moves once a second. */
export function sandboxClip(seed: string, seconds: number, ratio: string): Buffer {
  const size = sizes[ratio] ?? sizes['16:9']!;
  const hash = createHash('sha256').update(seed).digest();
  const { lumaWidth, lumaHeight } = planeSizes(size);
  const frames: Array<{ nalUnits: Buffer[]; key: boolean }> = [];
  for (let second = 0; second < seconds; second += 1) {
    const band = Math.floor(((second + 1) * size.width) / (seconds + 1));
    // Samples stay within 16..235 (video range), never 0, which some decoders refuse in raw macroblocks.
    const luma = new Uint8Array(lumaWidth * lumaHeight);
    for (let y = 0; y < lumaHeight; y += 1) {
      for (let x = 0; x < lumaWidth; x += 1)
        luma[y * lumaWidth + x] = Math.abs(x - band) < 6 ? 235 : 40 + ((hash[0]! + y * 2) % 120);
    }
    const cb = new Uint8Array((lumaWidth * lumaHeight) / 4).fill(16 + (hash[1]! % 220));
    const cr = new Uint8Array((lumaWidth * lumaHeight) / 4).fill(16 + (hash[2]! % 220));
    frames.push({ nalUnits: [keyFrame(size, { luma, cb, cr }, second % 2)], key: true });
    for (let frame = 1; frame < framesPerSecond; frame += 1)
      frames.push({ nalUnits: [repeatFrame(size, frame)], key: false });
  }
  return mp4File({
    size,
    sps: sequenceParameterSet(size),
    pps: pictureParameterSet(),
    frames,
    frameMs: 1000 / framesPerSecond,
  });
}

function promptOf(request: VideoGenerationRequest): string {
  return request.content.flatMap((item) => (item.type === 'text' ? [item.text] : [])).join('\n');
}

/**
 * The sandbox's video model: a task that runs for a moment, then answers a real MP4 (H.264) of the asked
 * duration, whose picture depends on the prompt, the seed and the ratio only; or, when the prompt holds a
 * trigger word, fails, runs slow or is cancelled.
 */
export const sandboxVideo: VideoAdapter = {
  check: refuseMaxTokens,
  createTask(request) {
    const seconds = Math.min(maxSeconds, request.duration ?? defaultSeconds);
    const prompt = promptOf(request);
    const trigger = jobTrigger(prompt);
    return Promise.resolve(
      encodeTask({
        seed: `${prompt}\n${request.seed ?? -1}`,
        seconds,
        ratio: request.ratio ?? '16:9',
        ...(request.resolution ? { resolution: request.resolution } : {}),
        startedAt: Date.now(),
        ...(trigger ? { trigger } : {}),
      }),
    );
  },
  poll(taskId): Promise<VideoTaskReport> {
    const task = decodeTask(taskId);
    if (!task) return Promise.resolve({ state: 'failed', error: `the sandbox has no task "${taskId}"` });
    if (task.trigger?.kind === 'fail') return Promise.resolve({ state: 'failed', error: failedOnPurpose });
    if (task.trigger?.kind === 'cancel') return Promise.resolve({ state: 'cancelled', error: cancelledOnPurpose });
    if (Date.now() - task.startedAt < runningMs(task)) return Promise.resolve({ state: 'running' });
    const video = sandboxClip(task.seed, task.seconds, task.ratio);
    return Promise.resolve({
      state: 'succeeded',
      video: { kind: 'inline', mediaType: 'video/mp4', data: video.toString('base64') },
      durationSeconds: task.seconds,
      ...(task.resolution ? { resolution: task.resolution } : {}),
      providerUsage: { sandbox: true, seconds: task.seconds },
    });
  },
  cancel: () => Promise.resolve(),
};
