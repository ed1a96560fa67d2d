import type { FastifyBaseLogger } from 'fastify';
import type { EndingHold, RecordedGeneration, RequestLog } from '../domain/generation-route.ts';
import { nanosToUsd } from '../domain/money.ts';
import { generationLineLogger } from './logger.ts';

/** Levels at which request lines are written: their fields are not even gathered otherwise. */
const requestLevels = new Set(['info', 'debug', 'trace']);

export function logsRequests(level: string): boolean {
  return requestLevels.has(level);
}

/**
 * How long a line whose generation is recorded waits for its answer to finish. Past it (the client left
 * mid-answer, so the answer never finishes) the generation is logged on a line of its own.
 */
const answerGraceMs = 1_000;

const generationRecorded = 'generation recorded';

/** What a request's line says of its answer. */
export interface AnswerFields {
  method: string;
  path: string;
  route: string;
  statusCode: number;
  responseTimeMs: number;
  remoteAddress: string;
  /** The usage record of the generation the request made, once it is written. */
  generation?: Readonly<Record<string, unknown>>;
}

/**
 * Where a request's line goes: the application's logger (`root`), with the request's id bound as Fastify binds
 * it (`reqId`) on the request's own logger, so the line's bytes are the same as that logger would write. It goes
 * through `generationLineLogger`, which censors these lines as every logger does, for less: their fields
 * are strings and numbers (`AnswerFields`) and one object, `generation`.
 */
export interface RequestLineTarget {
  root: FastifyBaseLogger;
  requestId: string;
}

/** A line of `writeLine`: strings and numbers, and at most one object, `generation`. */
type LineFields = AnswerFields | { event: 'generation'; generation: Readonly<Record<string, unknown>> };

/** Writes a request's line (or its generation's) at `info`, bound to the request's id. */
export function writeLine(target: RequestLineTarget, fields: LineFields, message: string): void {
  generationLineLogger(target.root).info({ reqId: target.requestId, ...fields }, message);
}

/**
 * The one line of a request that makes a generation: written once its answer has finished and its
 * reservation has ended, with the usage record's fields when one was written. The record is usually written
 * after the answer has gone out (settlement does not hold the answer back), a stream's sometimes just before.
 */
export class RequestLine implements RequestLog {
  /** Lines of records waiting for their answers to finish: a stopping process writes them without waiting. */
  private static readonly waiting = new Set<RequestLine>();

  /** Writes at once every record line still waiting for its answer (the process is stopping). */
  static writeWaiting(): void {
    for (const line of RequestLine.waiting) {
      clearTimeout(line.grace);
      line.writeGenerationAlone();
    }
  }

  private pending = 0;
  private answer: AnswerFields | undefined;
  private generation: Readonly<Record<string, unknown>> | undefined;
  private written = false;
  private grace: NodeJS.Timeout | undefined;

  constructor(private readonly target: RequestLineTarget) {}

  awaits(hold: EndingHold): void {
    this.pending += 1;
    hold.whenEnded(() => {
      this.pending -= 1;
      const generation = hold.recorded;
      if (generation) {
        const fields = generationFields(generation);
        if (!this.carries(fields)) this.writeGeneration(fields);
      }
      this.flush();
    });
  }

  /** Takes a usage record's fields into the line; false when it cannot (written already, or carrying another). */
  carries(generation: Readonly<Record<string, unknown>>): boolean {
    if (this.written || this.generation) return false;
    this.generation = generation;
    return true;
  }

  answered(answer: AnswerFields): void {
    this.answer = answer;
    this.flush();
  }

  private flush(): void {
    if (this.pending > 0 || this.written) return;
    if (this.answer) {
      this.written = true;
      clearTimeout(this.grace);
      RequestLine.waiting.delete(this);
      if (this.generation) this.answer.generation = this.generation;
      writeLine(this.target, this.answer, 'request completed');
    } else if (this.generation && this.grace === undefined) {
      this.grace = setTimeout(() => this.writeGenerationAlone(), answerGraceMs);
      RequestLine.waiting.add(this);
    }
  }

  /** The answer did not finish in time: the record gets its own line, and a late answer a line without it. */
  private writeGenerationAlone(): void {
    this.grace = undefined;
    RequestLine.waiting.delete(this);
    const generation = this.generation;
    if (this.written || !generation) return;
    this.generation = undefined;
    this.writeGeneration(generation);
  }

  private writeGeneration(generation: Readonly<Record<string, unknown>>): void {
    writeLine(this.target, { event: 'generation', generation }, generationRecorded);
  }
}

/** The line of a usage record that no request's line carries (a media job's, say). */
export function writeGenerationLine(
  log: { info(fields: object, message: string): void },
  generation: Readonly<Record<string, unknown>>,
): void {
  log.info({ event: 'generation', generation }, generationRecorded);
}

/** What the operator's log line says of a usage record. */
export function generationFields(generation: RecordedGeneration): Readonly<Record<string, unknown>> {
  const route = generation.route;
  return {
    generationId: generation.generationId,
    accountId: generation.accountId,
    apiKeyId: generation.apiKeyId,
    model: generation.model,
    modality: generation.modality,
    status: generation.status,
    usdCost: nanosToUsd(generation.chargedNanos),
    durationMs: generation.durationMs,
    providerId: route?.providerId,
    upstreamModel: route?.upstreamModel,
    fallbacks: route?.fallbacks,
    requestId: route?.requestId,
    firstByteMs: route?.firstByteMs,
    routing: route?.strategy,
    keyId: route?.keyId,
  };
}
