import type { FastifyInstance, FastifyRequest } from 'fastify';
import { GatewayError } from '../domain/errors.ts';
import { scanJsonText } from '../domain/json-text.ts';

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

/**
 * Replaces Fastify's JSON body parser by one that first enforces the input limits (nesting depth, numbers
 * out of range) and then parses exactly as Fastify does, `__proto__` and `constructor.prototype` included.
 */
export function useGuardedJsonParser(app: FastifyInstance, maxDepth: number): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body as string;
    if (text.length === 0 && acceptsEmptyBody(request)) return done(null, undefined);
    const problem = scanJsonText(text, maxDepth);
    if (problem === 'too-deep') {
      return done(new GatewayError('GW_MALFORMED_JSON', `the JSON body is nested deeper than the limit of ${maxDepth} levels`), undefined);
    }
    if (problem === undefined) return parse(request, text, done);
    parse(request, text, (error, parsed) => {
      if (error) return done(error, undefined);
      const path = nonFinitePath(parsed) ?? 'body';
      done(new GatewayError('GW_VALIDATION', `${path} is a number too large to represent`), undefined);
    });
  });
}
