import { Readable } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';
import { GatewayError } from '../../src/domain/errors.ts';
import { readMultipartForm } from '../../src/http/multipart-form.ts';

/** Bytes each busboy parser made here was given to parse, in the order the parsers were made. */
const parsed = vi.hoisted((): number[] => []);

vi.mock('@fastify/busboy', async (importOriginal) => {
  const busboy = await importOriginal<typeof import('@fastify/busboy')>();
  return {
    ...busboy,
    Busboy: (...args: Parameters<typeof busboy.Busboy>) => {
      const parser = busboy.Busboy(...args);
      const index = parsed.push(0) - 1;
      const write = parser._write.bind(parser);
      parser._write = (chunk: unknown, encoding, callback) => {
        if (Buffer.isBuffer(chunk)) parsed[index]! += chunk.length;
        write(chunk, encoding, callback);
      };
      return parser;
    },
  };
});

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
    expect(parsed).toHaveLength(1);
    expect(parsed[0]).toBeLessThanOrEqual(throughSeventhPart + 4096);
  });
});
