import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { MultipartLimits } from '../../src/config/load-config.ts';
import { GatewayError } from '../../src/domain/errors.ts';
import { readMultipartForm, type MultipartField, type MultipartFormOptions } from '../../src/http/multipart-form.ts';

const boundary = 'form-boundary';
const limits: MultipartLimits = { maxParts: 6, maxFields: 4, maxFieldBytes: 64, maxFiles: 2, maxFileBytes: 32 };

type Part = { name: string; value: string } | { name: string; filename: string; bytes: string };

function body(parts: readonly Part[]): Buffer {
  const text = parts.map((part) =>
    'filename' in part
      ? `--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"; filename="${part.filename}"\r\nContent-Type: image/png\r\n\r\n${part.bytes}\r\n`
      : `--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"\r\n\r\n${part.value}\r\n`,
  );
  return Buffer.from(`${text.join('')}--${boundary}--\r\n`);
}

/** The body as a stream of small chunks, as a socket would deliver it. */
function read(bytes: Buffer, options: Partial<MultipartFormOptions> = {}) {
  const chunks = Array.from({ length: Math.ceil(bytes.length / 1000) }, (_, index) =>
    bytes.subarray(index * 1000, (index + 1) * 1000),
  );
  const stream = Readable.from(chunks);
  return {
    stream,
    form: readMultipartForm(
      stream,
      { 'content-type': `multipart/form-data; boundary=${boundary}` },
      { limits, maxBodyBytes: 1_000_000, ...options },
    ),
  };
}

const fields = (count: number) => Array.from({ length: count }, (_, index) => ({ name: `f${index}`, value: 'x' }));

async function refusal(promise: Promise<unknown>): Promise<GatewayError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(GatewayError);
  return error as GatewayError;
}

describe('readMultipartForm', () => {
  it('reads fields in order and files on a route that takes them, exactly at every limit', async () => {
    const parts: Part[] = [
      ...fields(4),
      { name: 'a', filename: 'a.png', bytes: 'p'.repeat(32) },
      { name: 'b', filename: 'b.png', bytes: 'q' },
    ];
    const form = await read(body(parts)).form;
    expect(form.fields).toEqual(fields(4));
    expect(form.files.map((file) => [file.name, file.filename, file.mediaType, file.bytes.toString()])).toEqual([
      ['a', 'a.png', 'image/png', 'p'.repeat(32)],
      ['b', 'b.png', 'image/png', 'q'],
    ]);
  });

  it('stops at the first part past a count limit: no field after it reaches the route', async () => {
    const seen: MultipartField[] = [];
    const tooManyFields = await refusal(read(body(fields(50)), { onField: (field) => seen.push(field) }).form);
    expect([tooManyFields.code, tooManyFields.message]).toEqual([
      'GW_VALIDATION',
      'the multipart form has more than 4 fields (server.multipart.maxFields)',
    ]);
    expect(seen).toEqual(fields(4));
    const file = { name: 'a', filename: 'a.png', bytes: 'p' };
    const tooManyParts = await refusal(read(body([...fields(4), file, file, file])).form);
    expect(tooManyParts.message).toBe('the multipart form has more than 6 parts (server.multipart.maxParts)');
    const tooManyFiles = await refusal(read(body([file, file, file])).form);
    expect(tooManyFiles.message).toBe('the multipart form has more than 2 files (server.multipart.maxFiles)');
  });

  it('answers 413 for a field, a file or a body past its size', async () => {
    const field = await refusal(read(body([{ name: 'prompt', value: 'x'.repeat(65) }])).form);
    expect([field.code, field.message]).toEqual([
      'GW_PAYLOAD_TOO_LARGE',
      'multipart field "prompt" is larger than 64 bytes (server.multipart.maxFieldBytes)',
    ]);
    const file = await refusal(read(body([{ name: 'a', filename: 'a.png', bytes: 'p'.repeat(33) }])).form);
    expect(file.message).toBe('multipart file "a" is larger than 32 bytes (server.multipart.maxFileBytes)');
    const whole = await refusal(read(body(fields(3)), { maxBodyBytes: 100 }).form);
    expect([whole.code, whole.message]).toEqual([
      'GW_PAYLOAD_TOO_LARGE',
      'the body is larger than 100 bytes (server.bodyLimitBytes)',
    ]);
  });

  it("refuses a file at once on a route that takes none, with the route's own refusal", async () => {
    const refuseFile = (name: string) => new GatewayError('GW_PARAMETER_UNSUPPORTED', `no files (${name})`);
    const error = await refusal(read(body([{ name: 'upload', filename: 'a.png', bytes: 'p' }]), { refuseFile }).form);
    expect([error.code, error.message]).toEqual(['GW_PARAMETER_UNSUPPORTED', 'no files (upload)']);
  });

  it("refuses names that reach a prototype, text storage cannot keep, and a route's own refusal of a field", async () => {
    for (const name of ['__proto__', '__proto__[model]', 'a[constructor]', 'prototype']) {
      expect((await refusal(read(body([{ name, value: 'x' }])).form)).message).toContain(JSON.stringify(name));
    }
    expect((await refusal(read(body([{ name: 'prompt', value: 'a\u0000b' }])).form)).message).toContain('U+0000');
    const onField = ({ name, value }: MultipartField) => {
      if (name === 'model' && value !== 'known')
        throw new GatewayError('GW_MODEL_NOT_AVAILABLE', `model "${value}" is not available`);
    };
    expect((await refusal(read(body([{ name: 'model', value: 'other' }, ...fields(3)]), { onField }).form)).code).toBe(
      'GW_MODEL_NOT_AVAILABLE',
    );
  });

  it('refuses a body that is not multipart with 400', async () => {
    const stream = Readable.from([Buffer.from('x')]);
    const error = await refusal(
      readMultipartForm(stream, { 'content-type': 'multipart/form-data' }, { limits, maxBodyBytes: 1_000 }),
    );
    expect(error.message).toContain('boundary');
    const truncated = await refusal(
      read(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="a"\r\n\r\nunfinished`)).form,
    );
    expect(truncated.code).toBe('GW_VALIDATION');
  });
});
