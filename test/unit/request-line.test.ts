import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { RecordedGeneration } from '../../src/domain/generation-route.ts';
import { redactedLogPaths, redactionCensor } from '../../src/telemetry/logger.ts';
import { RequestLine, writeLine, type AnswerFields } from '../../src/telemetry/request-line.ts';

/** A reservation as the line sees it: something that ends once, with the record it was settled with. */
class Ending {
  recorded: RecordedGeneration | undefined = undefined;
  private readonly callbacks: Array<() => void> = [];
  whenEnded(callback: () => void): void {
    this.callbacks.push(callback);
  }
  end(): void {
    for (const callback of this.callbacks.splice(0)) callback();
  }
}

function capture(): { line: RequestLine; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino(
    { level: 'info' },
    { write: (text: string) => lines.push(JSON.parse(text) as Record<string, unknown>) },
  );
  return { line: new RequestLine({ root: logger, requestId: 'req-1' }), lines };
}

const answer = (): AnswerFields => ({
  method: 'POST',
  path: '/api/alpha/v1/embeddings',
  route: '/api/alpha/v1/embeddings',
  statusCode: 200,
  responseTimeMs: 1.5,
  remoteAddress: '127.0.0.1',
});
const record = { generationId: 'gen_1', model: 'm', status: 'succeeded', usdCost: 0.001 };

describe("a request's one log line, carrying its generation's record", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('is written at once for a request that reserved nothing', () => {
    const { line, lines } = capture();
    line.answered(answer());
    expect(lines).toEqual([expect.objectContaining({ msg: 'request completed', reqId: 'req-1', statusCode: 200 })]);
    expect(lines[0]).not.toHaveProperty('generation');
  });

  it('waits, once answered, for the record, and writes one line with it (the usual order)', () => {
    const { line, lines } = capture();
    const reservation = new Ending();
    line.awaits(reservation);
    line.answered(answer());
    expect(lines).toEqual([]);
    expect(line.carries(record)).toBe(true);
    reservation.end();
    expect(lines).toEqual([expect.objectContaining({ msg: 'request completed', statusCode: 200, generation: record })]);
  });

  it('holds a record written before the answer finished until the answer, and writes it once', () => {
    const { line, lines } = capture();
    const reservation = new Ending();
    line.awaits(reservation);
    expect(line.carries(record)).toBe(true);
    reservation.end();
    expect(lines).toEqual([]);
    line.answered(answer());
    expect(lines).toEqual([expect.objectContaining({ msg: 'request completed', generation: record })]);
  });

  it('writes the line without a record when the reservation was given back', () => {
    const { line, lines } = capture();
    const reservation = new Ending();
    line.awaits(reservation);
    line.answered(answer());
    reservation.end();
    expect(lines).toEqual([expect.objectContaining({ msg: 'request completed' })]);
    expect(lines[0]).not.toHaveProperty('generation');
  });

  it('logs the record on its own line when the answer never finishes (a client gone mid-stream), and a late answer without it', () => {
    vi.useFakeTimers();
    const { line, lines } = capture();
    const reservation = new Ending();
    line.awaits(reservation);
    line.carries(record);
    reservation.end();
    vi.advanceTimersByTime(999);
    expect(lines).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(lines).toEqual([
      expect.objectContaining({ msg: 'generation recorded', event: 'generation', reqId: 'req-1', generation: record }),
    ]);
    // A later reservation of the same request whose record comes while the answer is still missing gets a grace of its own.
    const later = new Ending();
    line.awaits(later);
    expect(line.carries({ ...record, generationId: 'gen_2' })).toBe(true);
    later.end();
    vi.advanceTimersByTime(1_000);
    expect(lines).toEqual([
      expect.objectContaining({ generation: record }),
      expect.objectContaining({ msg: 'generation recorded', generation: { ...record, generationId: 'gen_2' } }),
    ]);
    line.answered(answer());
    expect(lines).toHaveLength(3);
    expect(lines[2]).toMatchObject({ msg: 'request completed' });
    expect(lines[2]).not.toHaveProperty('generation');
  });

  it('carries one record: a second one, or one after the line was written, goes on a line of its own', () => {
    const { line, lines } = capture();
    const first = new Ending();
    const second = new Ending();
    line.awaits(first);
    line.awaits(second);
    expect(line.carries(record)).toBe(true);
    expect(line.carries({ ...record, generationId: 'gen_2' })).toBe(false);
    first.end();
    line.answered(answer());
    expect(lines).toEqual([]);
    second.end();
    expect(lines).toEqual([expect.objectContaining({ generation: record })]);
    expect(line.carries({ ...record, generationId: 'gen_3' })).toBe(false);
  });

  it('carries the record a hold was settled with, announced when the hold ends', () => {
    const { line, lines } = capture();
    const reservation = new Ending();
    line.awaits(reservation);
    line.answered(answer());
    reservation.recorded = {
      generationId: 'gen_settled',
      accountId: 'acct',
      apiKeyId: null,
      model: 'm',
      modality: 'text',
      status: 'succeeded',
      chargedNanos: 2_000_000n,
      request: {},
      usage: {},
      durationMs: 3,
      route: { providerId: 'p', upstreamModel: 'u', fallbacks: [], requestId: 'req-1' },
    };
    reservation.end();
    expect(lines).toEqual([
      expect.objectContaining({
        msg: 'request completed',
        generation: expect.objectContaining({ generationId: 'gen_settled', usdCost: 0.002, providerId: 'p' }),
      }),
    ]);
  });
});

describe('the lines of requests and generations', () => {
  it("are censored where the request's own logger censors them, byte for byte", () => {
    const written: string[] = [];
    const root = pino(
      { level: 'info', timestamp: false, redact: { paths: redactedLogPaths, censor: redactionCensor } },
      { write: (text: string) => written.push(text) },
    );
    const credentials = {
      apiKey: 'gwk_plain',
      token: 'token-plain',
      password: 'password-plain',
      secret: 'secret-plain',
      headers: {
        authorization: 'Bearer bearer-plain',
        'x-api-key': 'x-api-key-plain',
        'x-goog-api-key': 'goog-plain',
        cookie: 'cookie-plain',
        'set-cookie': 'set-cookie-plain',
        accept: 'application/json',
      },
    };
    const generation = { ...record, ...credentials, fallbacks: [{ providerId: 'p', ...credentials }] };
    const lines = [
      { fields: { ...answer(), generation }, message: 'request completed' },
      { fields: { event: 'generation' as const, generation }, message: 'generation recorded' },
      { fields: answer(), message: 'request completed' },
    ];
    for (const { fields, message } of lines) {
      root.child({ reqId: 'req-1' }).info(fields, message);
      writeLine({ root, requestId: 'req-1' }, fields, message);
    }
    expect(written).toHaveLength(6);
    for (let index = 0; index < written.length; index += 2) expect(written[index + 1]).toBe(written[index]);
    // Censored one level under the line, as everywhere (the fallbacks' fields, deeper, are the same on both).
    const censored = {
      apiKey: redactionCensor,
      token: redactionCensor,
      password: redactionCensor,
      secret: redactionCensor,
      headers: {
        authorization: redactionCensor,
        'x-api-key': redactionCensor,
        'x-goog-api-key': redactionCensor,
        cookie: redactionCensor,
        'set-cookie': redactionCensor,
        accept: 'application/json',
      },
    };
    for (const text of written.slice(0, 4))
      expect(JSON.parse(text)).toMatchObject({ reqId: 'req-1', generation: censored });
  });
});
