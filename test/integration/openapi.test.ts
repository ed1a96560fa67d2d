import path from 'node:path';
import { validate, compileErrors } from '@readme/openapi-parser';
import { lintFromString, loadConfig } from '@redocly/openapi-core';
import type { RouteOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BatchEmbedContentsRequest, EmbedContentRequest } from '../../src/protocols/gemini/embed-content.ts';
import { GenerateContentRequest } from '../../src/protocols/gemini/generate-content.ts';
import {
  startDocumentedGateway,
  type DocumentedGateway,
  type OpenApiDocument,
  type OpenApiMedia,
  type OpenApiOperation,
} from '../support/documented-gateway.ts';

/** One method of one route as registered: what the document must hold. */
interface RegisteredOperation {
  method: string;
  url: string;
  route: RouteOptions;
}

const methodsOf = (route: RouteOptions) => (Array.isArray(route.method) ? route.method : [route.method]);

/**
 * Every operation the app answers, from what the onRoute hook saw: each method of each route, without the
 * HEAD routes Fastify adds by itself beside GET routes (same URL, same handler), with the explicit HEAD
 * routes (the probes, and GET|HEAD downloads).
 */
function registeredOperations(routes: RouteOptions[]): RegisteredOperation[] {
  const getHandlers = new Map(
    routes.filter((route) => methodsOf(route).includes('GET')).map((route) => [route.url, route.handler]),
  );
  const automaticHead = (route: RouteOptions) =>
    route.method === 'HEAD' && getHandlers.get(route.url) === route.handler;
  return routes
    .filter((route) => !automaticHead(route))
    .flatMap((route) => methodsOf(route).map((method) => ({ method, url: route.url, route })));
}

/** Plugin-served files left out of the document on purpose: the dashboard's built assets and Swagger UI's. */
function isStaticFile({ url, route }: RegisteredOperation): boolean {
  return route.schema?.hide === true && !url.startsWith('/api') && url !== '/' && url !== '/docs';
}

/** The route's URL as the document writes it: `:name` as `{name}`, `*` as `{wildcardName}`. */
function documentedPath({ url, route }: RegisteredOperation): string {
  return url.replace(/:([A-Za-z0-9_]+)/g, '{$1}').replace('*', `{${route.schema?.wildcardName ?? '*'}}`);
}

const envelopeRef = '#/components/schemas/ErrorEnvelope';

/** True when `schema` is the shared envelope component, or a union one of whose members is. */
function namesEnvelope(schema: Record<string, unknown> | undefined): boolean {
  if (!schema) return false;
  if (schema.$ref === envelopeRef) return true;
  return ['anyOf', 'oneOf'].some(
    (key) => Array.isArray(schema[key]) && (schema[key] as Array<Record<string, unknown>>).some(namesEnvelope),
  );
}

/** Every operation of the document, named `METHOD /path`. */
function operationsOf(document: OpenApiDocument): Array<[string, OpenApiOperation]> {
  return Object.entries(document.paths).flatMap(([route, item]) =>
    Object.entries(item).map(([method, operation]): [string, OpenApiOperation] => [
      `${method.toUpperCase()} ${route}`,
      operation,
    ]),
  );
}

const hasExample = (media: OpenApiMedia) => media.example !== undefined || media.examples !== undefined;

/**
 * What an operation lacks of its documentation: a summary, a description, an example of its body, and one of
 * its main answer (the first 2xx with a body; bytes, as downloads answer, have nothing to show). An operation
 * with neither body nor answer body (a HEAD probe, a 204) has nothing to give an example of.
 */
function undocumented(name: string, operation: OpenApiOperation): string[] {
  const lacks: string[] = [];
  if (!operation.summary?.trim()) lacks.push(`${name}: no summary`);
  if (!operation.description?.trim()) lacks.push(`${name}: no description`);
  const request = Object.values(operation.requestBody?.content ?? {});
  if (request.length > 0 && !request.some(hasExample)) lacks.push(`${name}: no request example`);
  const [status, main] =
    Object.entries(operation.responses)
      .filter(([code, response]) => code.startsWith('2') && response.content !== undefined)
      .sort(([a], [b]) => a.localeCompare(b))[0] ?? [];
  const shown = Object.values(main?.content ?? {}).filter((media) => media.schema?.format !== 'binary');
  if (shown.length > 0 && !shown.some(hasExample)) lacks.push(`${name}: no example of its ${status} answer`);
  return lacks;
}

describe('the OpenAPI document', () => {
  let started: DocumentedGateway;
  let document: OpenApiDocument;
  let routes: RouteOptions[];

  beforeAll(async () => {
    started = await startDocumentedGateway();
    ({ document, routes } = started);
  });
  afterAll(async () => started?.close());

  it('is a valid OpenAPI 3.1 document', async () => {
    expect(document.openapi).toBe('3.1.0');
    const result = await validate(structuredClone(document) as never);
    expect(result.valid, result.valid ? '' : compileErrors(result)).toBe(true);
  });

  it('passes the OpenAPI lint of redocly.yaml (the recommended rules) without a problem', async () => {
    const config = await loadConfig({ configPath: path.join(import.meta.dirname, '../../redocly.yaml') });
    const problems = await lintFromString({ source: JSON.stringify(document), absoluteRef: 'openapi.json', config });
    expect(
      problems.map(
        ({ severity, ruleId, message, location }) => `${severity} ${ruleId} ${location[0]?.pointer}: ${message}`,
      ),
    ).toEqual([]);
  });

  it('gives every operation a summary, a description and examples of its body and its main answer', () => {
    expect(operationsOf(document).flatMap(([name, operation]) => undocumented(name, operation))).toEqual([]);
    // The check itself: an operation with a body and a JSON answer is held to both examples.
    const created = document.paths['/api/v1/api-keys']!.post!;
    expect(created.requestBody!.content['application/json']!.example).toBeDefined();
    expect(created.responses['201']!.content!['application/json']!.example).toBeDefined();
    expect(
      undocumented('without', {
        ...created,
        requestBody: { content: { 'application/json': { schema: {} } } },
        responses: { '201': { content: { 'application/json': { schema: {} } } } },
      }),
    ).toEqual(['without: no request example', 'without: no example of its 201 answer']);
  });

  it('gives every operation an operationId of its own', () => {
    const ids = operationsOf(document).map(([, operation]) => operation.operationId);
    expect(ids.filter((id) => id === undefined)).toEqual([]);
    expect(new Set(ids).size).toBe(ids.length);
    expect(document.paths['/api/v1/usage/{generationId}']!.get!.operationId).toBe('getApiV1UsageByGenerationId');
  });

  it('marks no query parameter required that the gateway fills in with its default', async () => {
    const query = operationsOf(document).flatMap(([name, operation]) =>
      (operation.parameters ?? [])
        .filter((parameter) => parameter.in === 'query')
        .map((parameter) => ({ name, parameter })),
    );
    expect(
      query
        .filter(({ parameter }) => parameter.required && parameter.schema?.default !== undefined)
        .map(({ name, parameter }) => `${name} ${parameter.name}`),
    ).toEqual([]);
    const paging = query.filter(({ parameter }) => ['offset', 'limit', 'days'].includes(parameter.name));
    // The account's usage, daily spend, media, audit log and webhook deliveries, the compat usage, the admin API's
    // listings of generations, of the audit log and of a model's price versions, and the operator API's accounts,
    // usage, audit log and a model's price versions.
    expect(paging).toHaveLength(25);
    for (const { name, parameter } of paging) {
      expect(parameter.required, `${name} ${parameter.name}`).toBe(false);
      expect(parameter.schema?.default, `${name} ${parameter.name}`).toBeDefined();
    }
    // As the gateway answers: left out, each takes its default.
    const key = await started.fundedKey();
    const headers = { authorization: `Bearer ${key}` };
    const usage = await started.gateway.app.inject({ method: 'GET', url: '/api/v1/usage', headers });
    expect(usage.json()).toMatchObject({ offset: 0, limit: 20 });
    const daily = await started.gateway.app.inject({ method: 'GET', url: '/api/v1/usage/daily', headers });
    expect(daily.statusCode).toBe(200);
  });

  it('is served without a credential, with Swagger UI at /docs', async () => {
    const page = await started.gateway.app.inject({ method: 'GET', url: '/docs' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    const spec = await started.gateway.app.inject({ method: 'GET', url: '/docs/json' });
    expect(spec.json()).toEqual(document);
  });

  it('holds every route the app registered, with its method', () => {
    const operations = registeredOperations(routes);
    // A sanity check of the collection itself: the routes of every surface and the explicit HEAD probes are there.
    for (const expected of [
      'HEAD /api/alpha',
      'GET /api/v1/ai/models',
      'POST /api/gamma/v1beta/models/*',
      'GET /api/v1/media/files/*',
      'HEAD /api/v1/media/files/*',
      'GET /readyz',
    ]) {
      expect(operations.map(({ method, url }) => `${method} ${url}`)).toContain(expected);
    }
    const missing = operations
      .filter((operation) => !isStaticFile(operation))
      .filter((operation) => document.paths[documentedPath(operation)]?.[operation.method.toLowerCase()] === undefined)
      .map(({ method, url }) => `${method} ${url}`);
    expect(missing).toEqual([]);
    // Plugin files are the only routes left out, and none of them is an API route.
    expect(operations.filter(isStaticFile).filter(({ url }) => url.startsWith('/api'))).toEqual([]);
  });

  it('names every path parameter, wildcards included', () => {
    expect(Object.keys(document.paths).filter((route) => route.includes('{*}'))).toEqual([]);
    for (const [route, item] of Object.entries(document.paths)) {
      const names = [...route.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]);
      for (const [method, operation] of Object.entries(item)) {
        const declared = (operation.parameters ?? [])
          .filter((parameter) => parameter.in === 'path')
          .map((parameter) => parameter.name);
        expect(declared.sort(), `${method} ${route}`).toEqual([...names].sort());
      }
    }
  });

  it('gives every operation a 2xx answer with its schema and the error envelope for 4XX and 5XX', () => {
    const problems: string[] = [];
    for (const [route, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        const name = `${method.toUpperCase()} ${route}`;
        const successes = Object.entries(operation.responses).filter(([status]) => status.startsWith('2'));
        if (successes.length === 0) problems.push(`${name}: no 2xx answer`);
        // A 204, and the probes' HEAD answers, have no body; every other success documents one.
        const bodies = successes.filter(([status]) => status !== '204' && !(method === 'head' && !item.get));
        if (
          bodies.length > 0 &&
          !bodies.some(([, response]) =>
            Object.values(response.content ?? {}).some((media) => media.schema !== undefined),
          )
        ) {
          problems.push(`${name}: no schema for its 2xx answer`);
        }
        for (const range of ['4XX', '5XX']) {
          const response = operation.responses[range];
          const resolved = response?.$ref ? document.components.responses[response.$ref.split('/').pop()!] : response;
          if (!namesEnvelope(resolved?.content?.['application/json']?.schema))
            problems.push(`${name}: ${range} is not the error envelope`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('describes the envelope of error-envelope.ts once, as a shared component', () => {
    const envelope = document.components.schemas.ErrorEnvelope as {
      required: string[];
      properties: Record<string, { anyOf?: Array<{ required: string[] }> }>;
    };
    expect(envelope.required.sort()).toEqual(['error', 'errors', 'path', 'status', 'success', 'timestamp']);
    expect(envelope.properties.error!.anyOf!.map((shape) => shape.required.sort())).toEqual([
      ['code', 'message', 'type'],
      ['code', 'details', 'message', 'status'],
    ]);
    expect(JSON.stringify(document.paths)).not.toContain('"timestamp"');
  });

  it('documents request parameters and bodies, and the two credentials', () => {
    expect(Object.keys(document.components.securitySchemes)).toEqual(expect.arrayContaining(['apiKey', 'bearerAuth']));
    expect(document.components.securitySchemes.apiKey).toMatchObject({
      type: 'apiKey',
      in: 'header',
      name: 'x-api-key',
    });
    expect(document.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    const usage = document.paths['/api/compat/v1/usage']!.get!;
    expect(usage.parameters!.map((parameter) => `${parameter.in} ${parameter.name}`).sort()).toEqual([
      'query limit',
      'query offset',
    ]);
    expect(
      document.paths['/api/v1/text/completions']!.post!.requestBody!.content['application/json']!.schema,
    ).toMatchObject({ required: expect.arrayContaining(['model', 'messages']) });
    for (const publicRoute of ['/livez', '/readyz', '/openapi.json', '/api/v1/media/files/{objectKey}']) {
      expect(document.paths[publicRoute]!.get!.security, publicRoute).toEqual([]);
    }
    expect(document.paths['/api/alpha']!.head!.security).toEqual([]);
  });

  it('documents the bodies that routes check in code with the protocol schemas', () => {
    const gamma = document.paths['/api/gamma/v1beta/models/{modelAction}']!.post!;
    const documented = JSON.stringify(gamma.requestBody!.content['application/json']!.schema);
    for (const protocol of [GenerateContentRequest, EmbedContentRequest, BatchEmbedContentsRequest]) {
      for (const field of Object.keys(protocol.properties)) expect(documented).toContain(`"${field}"`);
    }
    const videos = document.paths['/api/alpha/v1/videos']!.post!.requestBody!.content;
    expect(Object.keys(videos).sort()).toEqual(['application/json', 'multipart/form-data']);
    expect(videos['application/json']!.schema).toMatchObject({ required: expect.arrayContaining(['model', 'prompt']) });
  });

  it('documents streams as text/event-stream and downloads with their media types', () => {
    const streaming: Array<[string, string]> = [
      ['/api/v1/text/completions', 'post'],
      ['/api/alpha/v1/chat/completions', 'post'],
      ['/api/alpha/v1/responses', 'post'],
      ['/api/alpha/v1/images/generations', 'post'],
      ['/api/beta/v1/messages', 'post'],
      ['/api/gamma/v1beta/models/{modelAction}', 'post'],
    ];
    for (const [route, method] of streaming) {
      expect(Object.keys(document.paths[route]![method]!.responses['200']!.content!), route).toContain(
        'text/event-stream',
      );
    }
    const files = document.paths['/api/v1/media/files/{objectKey}']!.get!.responses;
    expect(Object.keys(files['200']!.content!)).toEqual(
      expect.arrayContaining(['image/png', 'image/jpeg', 'video/mp4', 'audio/mpeg', 'audio/wav']),
    );
    expect(files['206']).toBeDefined();
    expect(Object.keys(document.paths['/api/alpha/v1/videos/{id}/content']!.get!.responses['200']!.content!)).toEqual([
      'video/mp4',
    ]);
  });
});
