import type { FastifySchema } from 'fastify';
import { surfaceOf } from '../../telemetry/surfaces.ts';
import {
  adminOnly,
  keySessionOrCookie,
  keySessionOrGoogleKey,
  noCredential,
  sessionOrCookie,
} from './security-schemes.ts';

interface Page {
  summary: string;
  description: string;
  /** The page's title, shown in its example. */
  title: string;
}

/** Pages that plugins register without documentation (the dashboard, the API explorer), with what the document says of them. */
const pages: Readonly<Record<string, Page>> = {
  '/': {
    summary: 'The dashboard: a single-page app for the account (sign-in, keys, usage, media)',
    description:
      'Signs in with a session cookie, then manages keys, reads usage and spend, and browses archived media.',
    title: 'Model gateway',
  },
  '/docs': {
    summary: 'This API explorer (Swagger UI), on the document served at /openapi.json',
    description: 'Browse every operation of this document and send requests with a key or a session token.',
    title: 'Swagger UI',
  },
};

const htmlPage = ({ summary, description, title }: Page): FastifySchema => ({
  summary,
  description,
  tags: ['operations'],
  security: noCredential,
  response: {
    200: {
      description: 'An HTML page',
      content: {
        'text/html': {
          schema: { type: 'string' },
          example: `<!doctype html><html><head><title>${title}</title></head><body><div id="app"></div></body></html>`,
        },
      },
    },
  },
});

/** The document's sections are the surfaces the metrics label requests with; the rest (health, pages, this document) is `operations`. */
function tagOf(url: string): string {
  const surface = surfaceOf(url);
  return surface === 'other' ? 'operations' : surface;
}

/**
 * The credentials of a section, where they differ from the document's default (a key or a session token): a
 * route that takes none, or others, says so in its own schema.
 */
const securityByTag: Readonly<Record<string, FastifySchema['security']>> = {
  gamma: keySessionOrGoogleKey,
  account: keySessionOrCookie,
  admin: adminOnly,
  operator: sessionOrCookie,
};

/**
 * `url` as the document writes it: `:name` stays for @fastify/swagger to turn into `{name}`, and `*` becomes
 * `{wildcardName}` (without a name it stays `*`, which @fastify/swagger writes `{*}`; the coverage test refuses that).
 */
function documentedUrl(url: string, wildcardName: string | undefined): string {
  return wildcardName ? url.replace('*', `{${wildcardName}}`) : url;
}

function renamedWildcard(params: unknown, wildcardName: string): unknown {
  const schema = params as { properties?: Record<string, unknown>; required?: string[] } | undefined;
  const wildcard = schema?.properties?.['*'];
  if (!schema?.properties || wildcard === undefined) return params;
  const { '*': _renamed, ...properties } = schema.properties;
  return {
    ...schema,
    properties: { ...properties, [wildcardName]: wildcard },
    required: [...(schema.required ?? []).filter((name) => name !== '*'), wildcardName],
  };
}

type Schema = Record<string, unknown>;

const isSchema = (value: unknown): value is Schema => typeof value === 'object' && value !== null;

/**
 * Query strings and headers are checked with Ajv's `useDefaults`, which fills in a field with a `default` when
 * the request leaves it out. TypeBox lists every field not wrapped in `Type.Optional` as required (so the
 * handler's type has the value), and @fastify/swagger writes that list as each parameter's `required: true`:
 * the document would demand what the gateway fills in itself. Here a field with a default is not required.
 */
function defaultedFieldsOptional(schema: unknown): unknown {
  if (!isSchema(schema) || !isSchema(schema.properties) || !Array.isArray(schema.required)) return schema;
  const properties = schema.properties;
  const required = schema.required.filter((name) => !(isSchema(properties[name]) && 'default' in properties[name]));
  const { required: _all, ...rest } = schema;
  return required.length > 0 ? { ...rest, required } : rest;
}

/** The media type an example is shown for: JSON when the content has it, else its first. */
function exampleMediaType(content: Record<string, unknown>): string | undefined {
  return 'application/json' in content ? 'application/json' : Object.keys(content)[0];
}

/**
 * A body (a schema, or content by media type) with its example: as the schema's `examples`, which
 * @fastify/swagger moves to the media type's `example`.
 */
function bodyWithExample(body: unknown, example: unknown): unknown {
  if (!isSchema(body)) return body;
  if (!isSchema(body.content)) return { ...body, examples: [example] };
  const mediaType = exampleMediaType(body.content);
  const media = mediaType === undefined ? undefined : body.content[mediaType];
  if (mediaType === undefined || !isSchema(media) || !isSchema(media.schema)) return body;
  return {
    ...body,
    content: { ...body.content, [mediaType]: { ...media, schema: { ...media.schema, examples: [example] } } },
  };
}

/**
 * The answers with the main one's example: the first 2xx with a body, a schema (given the schema's `examples`,
 * which @fastify/swagger moves to the media type) or content by media type (whose media type @fastify/swagger
 * copies as is, so the example goes there).
 */
function responsesWithExample(response: unknown, example: unknown): unknown {
  if (!isSchema(response)) return response;
  const main = Object.keys(response)
    .filter((status) => status.startsWith('2'))
    .sort()
    .find((status) => isSchema(response[status]) && response[status].type !== 'null');
  const answer = main === undefined ? undefined : response[main];
  if (main === undefined || !isSchema(answer)) return response;
  if (!isSchema(answer.content)) return { ...response, [main]: { ...answer, examples: [example] } };
  const mediaType = exampleMediaType(answer.content);
  const media = mediaType === undefined ? undefined : answer.content[mediaType];
  if (mediaType === undefined || !isSchema(media)) return response;
  return { ...response, [main]: { ...answer, content: { ...answer.content, [mediaType]: { ...media, example } } } };
}

/**
 * The @fastify/swagger `transform`: what a route's schema says, as the document shows it. Documentation-only
 * keys take their place (the body checked in code, the wildcard's name), each route gets the tag and the
 * credentials of its section, and the pages plugins register hidden are shown as pages.
 */
export function documentRoute({
  schema,
  url,
  method,
}: {
  schema: FastifySchema | undefined;
  url: string;
  method: string | string[];
}): { schema: FastifySchema; url: string } {
  const methods = typeof method === 'string' ? [method] : method;
  const page = pages[url];
  if (page !== undefined && methods.includes('GET')) return { schema: htmlPage(page), url };
  if (schema?.hide) return { schema, url };
  const { documentedBody, documentedExample, wildcardName, ...validated } = schema ?? {};
  const tag = tagOf(url);
  const documented: FastifySchema = { ...validated, tags: validated.tags ?? [tag] };
  const security = validated.security ?? securityByTag[tag];
  if (security) documented.security = security;
  if (documentedBody) documented.body = documentedBody;
  if (validated.querystring) documented.querystring = defaultedFieldsOptional(validated.querystring);
  if (validated.headers) documented.headers = defaultedFieldsOptional(validated.headers);
  if (documentedExample?.request !== undefined && documented.body)
    documented.body = bodyWithExample(documented.body, documentedExample.request);
  if (documentedExample?.answer !== undefined && documented.response)
    documented.response = responsesWithExample(documented.response, documentedExample.answer);
  if (wildcardName && validated.params) documented.params = renamedWildcard(validated.params, wildcardName);
  return { schema: documented, url: documentedUrl(url, wildcardName) };
}
