import type { Readable } from 'node:stream';
import { Busboy, type BusboyFileStream, type BusboyInstance } from '@fastify/busboy';
import type { MultipartLimits } from '../config/load-config.ts';
import { GatewayError } from '../domain/errors.ts';
import { describeUnstorableText, findUnstorableText } from './storable-text.ts';

/** A text field of a multipart form, in the order the form sent it. */
export interface MultipartField {
  name: string;
  value: string;
}

/** An uploaded file of a multipart form (only on routes that take files). */
export interface MultipartFile {
  name: string;
  filename: string;
  mediaType: string;
  bytes: Buffer;
}

export interface MultipartForm {
  fields: MultipartField[];
  files: MultipartFile[];
}

export interface MultipartFormOptions {
  limits: MultipartLimits;
  /** The whole body at most (`server.bodyLimitBytes`): a custom parser gets no limit from Fastify. */
  maxBodyBytes: number;
  /**
   * Each text field as soon as it is read, so a route can refuse (throw) before the rest of the body is
   * parsed: the model, for one.
   */
  onField?: (field: MultipartField) => void;
  /** The refusal of a file part; a route that takes files leaves it out and gets them, within the limits. */
  refuseFile?: (name: string) => GatewayError;
}

/** Field names that would reach an object's prototype where a form is turned into an object. */
const prototypeNames = new Set(['__proto__', 'constructor', 'prototype']);

/** Bytes handed to busboy at a time: after a refusal, at most this much more of the body is parsed. */
const sliceBytes = 4096;

/** Longer field names are refused (no form of ours has one near it; busboy itself does not limit them). */
const maxFieldNameBytes = 100;

const limitName = (limit: keyof MultipartLimits) => `server.multipart.${limit}`;

const tooMany = (what: string, limit: keyof MultipartLimits, value: number) =>
  new GatewayError('GW_VALIDATION', `the multipart form has more than ${value} ${what} (${limitName(limit)})`);

const tooLarge = (what: string, limit: keyof MultipartLimits | 'server.bodyLimitBytes', value: number) =>
  new GatewayError(
    'GW_PAYLOAD_TOO_LARGE',
    `${what} is larger than ${value} bytes (${limit.startsWith('server.') ? limit : limitName(limit as keyof MultipartLimits)})`,
  );

/**
 * The field's name and text checked as they arrive: no name that reaches a prototype (`__proto__`, also
 * inside brackets as in `__proto__[model]`), and no text storage cannot keep (U+0000, lone surrogates), by the
 * check every JSON body gets.
 */
function checkField(name: string, value: string): void {
  if (Buffer.byteLength(name) > maxFieldNameBytes)
    throw new GatewayError('GW_VALIDATION', `a multipart field name is longer than ${maxFieldNameBytes} bytes`);
  if (name.split(/[[\]]+/).some((segment) => prototypeNames.has(segment))) {
    throw new GatewayError(
      'GW_VALIDATION',
      `multipart field ${JSON.stringify(name)} is refused: "__proto__", "constructor" and "prototype" are not field names`,
    );
  }
  // An own property whatever the name (`fromEntries` defines it), so the walk sees the name and the text.
  const unstorable = findUnstorableText(Object.fromEntries([[name, value]]), 'body');
  if (unstorable) throw new GatewayError('GW_VALIDATION', describeUnstorableText(unstorable));
}

/**
 * Reads a `multipart/form-data` body as it streams in, within `limits`: the first part past a count limit
 * answers 400, a field, file or body past a size limit 413, each naming the limit, and parsing stops at
 * once (the rest of the body is drained unread, so the client still reads the answer). The count and size
 * limits are busboy's, enforced while it parses.
 */
export function readMultipartForm(
  payload: Readable,
  headers: { 'content-type'?: string | undefined; 'content-length'?: string | undefined },
  options: MultipartFormOptions,
): Promise<MultipartForm> {
  const { limits, maxBodyBytes } = options;
  const contentType = headers['content-type'];
  if (contentType === undefined)
    return Promise.reject(new GatewayError('GW_VALIDATION', 'the multipart body has no content type'));
  const declared = Number(headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBodyBytes)
    return Promise.reject(tooLarge('the body', 'server.bodyLimitBytes', maxBodyBytes));
  let parser: BusboyInstance;
  try {
    parser = Busboy({
      headers: { 'content-type': contentType },
      limits: {
        parts: limits.maxParts,
        fields: limits.maxFields,
        fieldSize: limits.maxFieldBytes,
        // A route that refuses files is told of the first one; one that takes them gets the configured count.
        files: options.refuseFile ? Number.POSITIVE_INFINITY : limits.maxFiles,
        fileSize: limits.maxFileBytes,
      },
    });
  } catch {
    return Promise.reject(
      new GatewayError('GW_VALIDATION', 'the multipart body cannot be read: its content type names no boundary'),
    );
  }

  return new Promise<MultipartForm>((resolve, reject) => {
    const form: MultipartForm = { fields: [], files: [] };
    let received = 0;
    let openFiles = 0;
    let parsed = false;
    let settled = false;

    const stop = (error: unknown) => {
      if (settled) return;
      settled = true;
      payload.off('data', feed);
      parser.removeAllListeners();
      parser.on('error', () => undefined);
      parser.destroy();
      const refusal =
        error instanceof GatewayError ? error : new GatewayError('GW_VALIDATION', 'the multipart body cannot be read');
      if (received > maxBodyBytes || payload.readableEnded || payload.destroyed) return reject(refusal);
      // The rest of the body (within the body limit) is read and dropped, not parsed, before the answer: Fastify
      // closes the connection after a parser's refusal, and a client still sending would see that, not the answer.
      const drain = (chunk: Buffer) => {
        received += chunk.length;
        if (received > maxBodyBytes) done();
      };
      const done = () => {
        payload.off('data', drain).off('end', done).off('error', done).off('close', done);
        reject(refusal);
      };
      payload.on('data', drain).once('end', done).once('error', done).once('close', done);
      payload.resume();
    };
    const finishIfDone = () => {
      if (settled || !parsed || openFiles > 0) return;
      settled = true;
      payload.off('data', feed);
      resolve(form);
    };
    // Busboy parses all of a chunk it is given, skipping the parts past a limit one by one, so a chunk (64 KiB,
    // a thousand parts of the smallest kind) goes to it in slices, and none after a refusal.
    function feed(chunk: Buffer): void {
      received += chunk.length;
      if (received > maxBodyBytes) {
        stop(tooLarge('the body', 'server.bodyLimitBytes', maxBodyBytes));
        return;
      }
      let flowing = true;
      for (let offset = 0; offset < chunk.length && !settled; offset += sliceBytes)
        flowing = parser.write(chunk.subarray(offset, offset + sliceBytes)) && flowing;
      if (!flowing && !settled) {
        payload.pause();
        parser.once('drain', () => payload.resume());
      }
    }

    // biome-ignore lint/complexity/useMaxParams: busboy's listener signature
    parser.on('field', (name, value, _nameTruncated, valueTruncated) => {
      if (settled) return;
      try {
        if (valueTruncated)
          throw tooLarge(`multipart field ${JSON.stringify(name)}`, 'maxFieldBytes', limits.maxFieldBytes);
        checkField(name, value);
        const field = { name, value };
        options.onField?.(field);
        form.fields.push(field);
      } catch (error) {
        stop(error);
      }
    });
    // biome-ignore lint/complexity/useMaxParams: busboy's listener signature
    parser.on('file', (name, stream: BusboyFileStream, filename, _encoding, mediaType) => {
      if (settled) return void stream.resume();
      try {
        checkField(name, filename);
        if (options.refuseFile) throw options.refuseFile(name);
      } catch (error) {
        stream.resume();
        return stop(error);
      }
      openFiles++;
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('limit', () =>
        stop(tooLarge(`multipart file ${JSON.stringify(name)}`, 'maxFileBytes', limits.maxFileBytes)),
      );
      stream.on('end', () => {
        openFiles--;
        if (settled) return;
        form.files.push({ name, filename, mediaType, bytes: Buffer.concat(chunks) });
        finishIfDone();
      });
    });
    parser.on('partsLimit', () => stop(tooMany('parts', 'maxParts', limits.maxParts)));
    parser.on('fieldsLimit', () => stop(tooMany('fields', 'maxFields', limits.maxFields)));
    parser.on('filesLimit', () => stop(tooMany('files', 'maxFiles', limits.maxFiles)));
    parser.on('error', () => stop(new GatewayError('GW_VALIDATION', 'the multipart body cannot be read')));
    parser.on('finish', () => {
      parsed = true;
      finishIfDone();
    });
    payload.on('error', stop);
    payload.on('end', () => {
      if (!settled) parser.end();
    });
    payload.on('data', feed);
  });
}
