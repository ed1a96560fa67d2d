import { Readable } from 'node:stream';
import { Busboy } from '@fastify/busboy';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { GatewayError } from '../../src/domain/errors.ts';
import { readMultipartForm } from '../../src/http/multipart-form.ts';

/**
 * Each busboy parser made here, with the bytes it was given to parse, in the order they were made. A spy on the
 * prototype rather than a module mock: the module is the one the gateway's code imported, in whatever order
 * test files share a worker.
 */
const writes = vi.spyOn(Busboy.prototype, '_write');
// Test files share the worker's modules: later files' parsers are not this file's to record.
afterAll(() => writes.mockRestore());

function bytesParsedByEachParser(): number[] {
  const parsed = new Map<unknown, number>();
  for (const [index, [chunk]] of writes.mock.calls.entries()) {
    const parser = writes.mock.contexts[index];
    parsed.set(parser, (parsed.get(parser) ?? 0) + (Buffer.isBuffer(chunk) ? chunk.length : 0));
  }
  return [...parsed.values()];
}

const boundary = 'form-boundary';
const part = (index: number) => `--${boundary}\r\nContent-Disposition: form-data; name="f${index}"\r\n\r\nx\r\n`;

describe('a multipart body past its part limit', () => {
  it('is parsed at most 4 KiB past the part that broke the limit, however large the chunk it came in', async () => {
    const parts = Array.from({ length: 20_000 }, (_, index) => part(index));
    const body = Buffer.from(`${parts.join('')}--${boundary}--\r\n`);
    // One chunk of about a megabyte: what a fast client's bytes may arrive as.
    const form = readMultipartForm(
      Readable.from([body]),
      { 'content-type': `multipart/form-data; boundary=${boundary}` },
      {
        limits: { maxParts: 6, maxFields: 6, maxFieldBytes: 64, maxFiles: 0, maxFileBytes: 0 },
        maxBodyBytes: 16 * 1024 * 1024,
      },
    );
    await expect(form).rejects.toBeInstanceOf(GatewayError);
    const throughSeventhPart = parts.slice(0, 7).join('').length;
    expect(body.length).toBeGreaterThan(1_000_000);
    const parsed = bytesParsedByEachParser();
    expect(parsed).toHaveLength(1);
    expect(parsed[0]).toBeLessThanOrEqual(throughSeventhPart + 4096);
  });
});
