import type { FastifyInstance, FastifyRequest } from 'fastify';
import { GatewayError } from '../domain/errors.ts';
import { scanJsonText } from '../domain/json-text.ts';
import { firstInvalidUtf8Byte } from '../domain/utf8.ts';
import { describeUnstorableText, findUnstorableText } from './storable-text.ts';

/** Where in a parsed body the first non-finite number sits, as the envelope names fields (`body.a[0].b`). */
export function nonFinitePath(value: unknown, at = 'body'): string | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : at;
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      const found = nonFinitePath(value[index], `${at}[${index}]`);
      if (found) return found;
    }
  } else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      const found = nonFinitePath(item, `${at}.${key}`);
      if (found) return found;
    }
  }
  return undefined;
}

/** Methods whose requests carry no body by meaning: an empty body sent as JSON is no error there. */
const bodilessMethods = new Set(['DELETE', 'GET', 'HEAD', 'OPTIONS']);

function acceptsEmptyBody(request: FastifyRequest): boolean {
  return bodilessMethods.has(request.method) || request.routeOptions.schema?.body === undefined;
}

/** The body's first string storage cannot hold, or a refused field name (`__proto__` anywhere, `constructor` or `prototype` at the top), as a 400 naming the field; undefined when there is none. */
export function unstorableBodyError(body: unknown): GatewayError | undefined {
  const found = findUnstorableText(body, 'body', { forbidKeys: true });
  return found && new GatewayError('GW_VALIDATION', describeUnstorableText(found));
}

/**
 * Replaces Fastify's JSON body parser by one that first enforces the input limits (nesting depth, numbers
 * out of range), then parses, then refuses text storage cannot hold (U+0000, lone surrogates), a `__proto__`
 * field anywhere and a top-level `constructor` or `prototype` field, naming the field. Nested `constructor` and
 * `prototype` pass: free-form objects (a tool's JSON Schema, `metadata`) may name their properties so. The
 * parser itself runs without secure-json-parse's own scan ('ignore' mode lets `__proto__` through unremarked, as
 * an own field a later copy or merge would turn into a prototype): the walk below refuses it with the field's
 * path instead, in the same pass as the text check.
 */
export function useGuardedJsonParser(app: FastifyInstance, maxDepth: number): void {
  const parse = app.getDefaultJsonParser('ignore', 'ignore');
  app.removeContentTypeParser('application/json');
  // Read as bytes: decoded as a string, bytes that are not UTF-8 would become U+FFFD unseen, and the request
  // would be served (and billed) on text the client never sent.
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    // A compressed body is none the gateway reads (a client's gzip would read as JSON that is not UTF-8).
    const encoding = request.headers['content-encoding'];
    if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity')
      return done(
        new GatewayError(
          'GW_UNSUPPORTED_MEDIA_TYPE',
          `a body encoded as "${encoding}" is not accepted: send it uncompressed`,
        ),
        undefined,
      );
    // Always bytes here (parseAs: 'buffer'); Fastify's type for a parser's body is either.
    const bytes = typeof body === 'string' ? Buffer.from(body) : body;
    if (bytes.length === 0 && acceptsEmptyBody(request)) return done(null, undefined);
    const invalid = firstInvalidUtf8Byte(bytes);
    if (invalid !== undefined) {
      const byte = bytes[invalid]!.toString(16).toUpperCase().padStart(2, '0');
      return done(
        new GatewayError(
          'GW_MALFORMED_JSON',
          `the JSON body is not UTF-8: the byte 0x${byte} at offset ${invalid} begins no character`,
        ),
        undefined,
      );
    }
    const text = bytes.toString('utf8');
    const problem = scanJsonText(text, maxDepth);
    if (problem === 'too-deep') {
      return done(
        new GatewayError('GW_MALFORMED_JSON', `the JSON body is nested deeper than the limit of ${maxDepth} levels`),
        undefined,
      );
    }
    parse(request, text, (error, parsed) => {
      if (error) return done(error, undefined);
      if (problem === 'non-finite') {
        const path = nonFinitePath(parsed) ?? 'body';
        return done(new GatewayError('GW_VALIDATION', `${path} is a number too large to represent`), undefined);
      }
      const unstorable = unstorableBodyError(parsed);
      if (unstorable) return done(unstorable, undefined);
      done(null, parsed);
    });
  });
}
