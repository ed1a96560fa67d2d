import { Type, type Static, type TSchema } from '@fastify/type-provider-typebox';

/** What a route schema documents beyond what Fastify validates, and the pieces routes describe their answers with. */

/** Schemas by media type, as OpenAPI and Fastify both write a body or an answer that comes in several types. */
export interface DescribedContent {
  description: string;
  content: Record<string, { schema: object }>;
}

/** What a request and its answer look like: values of the route's body and answer schemas. */
export interface DocumentedExample {
  request?: unknown;
  answer?: unknown;
}

declare module 'fastify' {
  interface FastifySchema {
    /**
     * Documentation only: the body of a route that checks it in code (once the path has said which shape
     * applies, or because a multipart form is accepted too). Fastify never validates it; `body` stays what
     * the route validates before its handler runs.
     */
    documentedBody?: DescribedContent;
    /** Documentation only: the name the document gives the path's `*` wildcard (model ids and object keys may contain slashes). */
    wildcardName?: string;
    /**
     * Documentation only: a request body (for a route that takes one) and the main answer (the first 2xx with a
     * body), shown in the document beside their schemas; the OpenAPI lint checks each against its schema.
     */
    documentedExample?: DocumentedExample;
    /** The route relays an upstream provider's own error body once its checks passed (spec, Errors 2); copied into the document as is. */
    'x-relays-upstream-errors'?: true;
  }
}

/** Spread into the schema of a route that relays upstream errors. */
export const relaysUpstreamErrors = { 'x-relays-upstream-errors': true } as const;

/** `schema`, with the description the document shows for the answer or body it describes. */
export function described<S extends TSchema>(schema: S, description: string): S {
  return Type.Unsafe<Static<S>>({ ...schema, description }) as unknown as S;
}

const eventStreamNote =
  'Server-sent events (`text/event-stream`); the schema under `x-event-data` is that of the JSON on each `data:` line';

/** The schema of a `text/event-stream` answer whose `data:` lines each carry a JSON `data`. */
export function eventStreamSchema(data: TSchema, ending: string): object {
  return { type: 'string', description: `${eventStreamNote}. ${ending}`, 'x-event-data': data };
}

/** An answer that is always a stream of server-sent events, each `data:` line a JSON `data`. */
export function eventStream(description: string, data: TSchema, ending: string): DescribedContent {
  return { description, content: { 'text/event-stream': { schema: eventStreamSchema(data, ending) } } };
}

/** An answer that is one JSON body, or with `stream: true` server-sent events. */
export function jsonOrEventStream(
  description: string,
  { json, data, ending }: { json: TSchema; data: TSchema; ending: string },
): DescribedContent {
  return {
    description,
    content: { 'application/json': { schema: json }, 'text/event-stream': { schema: eventStreamSchema(data, ending) } },
  };
}

/** A download: the file's bytes, in one of `mediaTypes`. */
export function binaryDownload(description: string, mediaTypes: readonly string[]): DescribedContent {
  return {
    description,
    content: Object.fromEntries(mediaTypes.map((type) => [type, { schema: { type: 'string', format: 'binary' } }])),
  };
}

/**
 * An answer without a body (a 204, a HEAD probe). Typed as a bare object: TypeBox would read `type: 'null'`
 * as an answer of `null` and make handlers send one.
 */
export function noBody(description: string): object {
  return { type: 'null', description };
}

/** A redirect to where the bytes are served (a presigned bucket link). */
export function redirect(description: string): object {
  return {
    type: 'null',
    description,
    headers: { location: { type: 'string', description: 'Where to download from' } },
  };
}

/** A body the route checks in code, documented as the JSON it accepts (and a multipart form of the same fields, if given). */
export function jsonBody(
  schema: TSchema,
  description: string,
  options: { alsoMultipart?: boolean } = {},
): DescribedContent {
  const content: DescribedContent['content'] = { 'application/json': { schema } };
  if (options.alsoMultipart) content['multipart/form-data'] = { schema };
  return { description, content };
}
