import { setTimeout as sleep } from 'node:timers/promises';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startDocumentedGateway,
  type DocumentedGateway,
  type OpenApiDocument,
  type OpenApiOperation,
} from '../support/documented-gateway.ts';
import { testAdminToken } from '../support/test-gateway.ts';

const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });

type Json = Record<string, unknown>;

/** The documented answer of `status` (or its range) of an operation, its `$ref` resolved. */
function documentedAnswer(document: OpenApiDocument, operation: OpenApiOperation, status: number) {
  const response = operation.responses[String(status)] ?? operation.responses[`${String(status)[0]}XX`];
  if (!response) return undefined;
  return response.$ref ? document.components.responses[response.$ref.split('/').pop()!] : response;
}

/**
 * Checks an answer against the document: its status is documented for the operation, with the answer's
 * media type, and a JSON body validates against the schema (JSON Schema 2020-12, as OpenAPI 3.1 writes it);
 * for server-sent events, each `data:` JSON validates against the schema under `x-event-data`; an answer
 * without a body is documented without one.
 */
function expectDocumented(
  document: OpenApiDocument,
  { route, method, answer }: { route: string; method: string; answer: LightMyRequestResponse },
): void {
  const operation = document.paths[route]?.[method];
  expect(operation, `${method} ${route} is documented`).toBeDefined();
  const response = documentedAnswer(document, operation!, answer.statusCode);
  expect(response, `${method} ${route} documents ${answer.statusCode}: ${answer.body.slice(0, 300)}`).toBeDefined();
  if (answer.body === '') {
    expect(response!.content, `${method} ${route} ${answer.statusCode} is documented without a body`).toBeUndefined();
    return;
  }
  const mediaType = String(answer.headers['content-type'] ?? '').split(';')[0]!;
  const media = response!.content?.[mediaType];
  expect(media?.schema, `${method} ${route} ${answer.statusCode} documents ${mediaType}`).toBeDefined();
  const schema = media!.schema as Json;
  const check = (value: unknown, against: Json) => {
    const validate = ajv.compile({ ...against, components: document.components });
    expect(
      validate(value),
      `${method} ${route} ${answer.statusCode}: ${JSON.stringify(validate.errors)}\n${JSON.stringify(value).slice(0, 500)}`,
    ).toBe(true);
  };
  if (mediaType === 'text/event-stream') {
    const events = answer.body.split('\n').filter((line) => line.startsWith('data: ') && line !== 'data: [DONE]');
    expect(events.length).toBeGreaterThan(0);
    for (const line of events) check(JSON.parse(line.slice('data: '.length)), schema['x-event-data'] as Json);
  } else if (mediaType === 'application/json') {
    check(answer.json(), schema);
  }
}

describe('answers match the OpenAPI document', () => {
  let started: DocumentedGateway;
  let key: string;
  const call = (options: InjectOptions) =>
    started.gateway.app.inject({ ...options, headers: { 'x-api-key': key, ...options.headers } });
  const checked = async (route: string, options: InjectOptions, status: number) => {
    const answer = await call(options);
    expect(answer.statusCode, answer.body.slice(0, 500)).toBe(status);
    expectDocumented(started.document, { route, method: String(options.method ?? 'GET').toLowerCase(), answer });
    return answer;
  };
  const until = async (route: string, url: string, done: (body: Json) => boolean) => {
    for (let tries = 0; tries < 200; tries++) {
      const answer = await checked(route, { method: 'GET', url }, 200);
      if (done(answer.json())) return answer.json<Json>();
      await sleep(50);
    }
    throw new Error(`${url} did not finish`);
  };

  beforeAll(async () => {
    started = await startDocumentedGateway();
    key = await started.fundedKey();
  });
  afterAll(async () => started?.close());

  it('keeps what a handler answers beyond its documented schema (schemas document, they never filter)', async () => {
    const answer = await checked(
      '/api/alpha/v1/chat/completions',
      {
        method: 'POST',
        url: '/api/alpha/v1/chat/completions',
        payload: { model: 'sandbox-echo', messages: [{ role: 'user', content: 'Hi' }] },
      },
      200,
    );
    const documented = started.document.paths['/api/alpha/v1/chat/completions']!.post!.responses['200']!.content![
      'application/json'
    ]!.schema as { properties: Json };
    // The protocol schema names only choices and usage; the answer's other fields must still reach the client.
    expect(Object.keys(documented.properties).sort()).toEqual(['choices', 'usage']);
    expect(answer.json()).toMatchObject({
      id: expect.any(String),
      object: 'chat.completion',
      model: 'sandbox-echo',
      created: expect.any(Number),
    });
    const models = await checked(
      '/api/v1/ai/models/{modelId}',
      { method: 'GET', url: '/api/v1/ai/models/sandbox-image' },
      200,
    );
    expect(models.json()).toHaveProperty('capabilities.image.params');
  });

  it('operations: liveness, readiness (starting until the server listens), this document, Swagger UI, metrics', async () => {
    await checked('/livez', { method: 'GET', url: '/livez' }, 200);
    const ready = await checked('/readyz', { method: 'GET', url: '/readyz' }, 503);
    expect(ready.json()).toMatchObject({ status: 'starting' });
    await checked('/openapi.json', { method: 'GET', url: '/openapi.json' }, 200);
    await checked('/docs', { method: 'GET', url: '/docs' }, 200);
    await checked('/metrics', { method: 'GET', url: '/metrics' }, 200);
  });

  it('the catalog and the model lists of every surface', async () => {
    await checked('/api/v1/ai/models', { method: 'GET', url: '/api/v1/ai/models?outputModalities=text' }, 200);
    await checked('/api/v1/ai/models/{modelId}', { method: 'GET', url: '/api/v1/ai/models/sandbox-echo' }, 200);
    await checked('/api/v1/ai/models/{modelId}', { method: 'GET', url: '/api/v1/ai/models/no-such-model' }, 404);
    await checked('/api/alpha/v1/models', { method: 'GET', url: '/api/alpha/v1/models' }, 200);
    await checked('/api/beta/v1/models', { method: 'GET', url: '/api/beta/v1/models' }, 200);
    await checked('/api/gamma/v1beta/models', { method: 'GET', url: '/api/gamma/v1beta/models' }, 200);
    for (const id of ['sandbox-echo', 'sandbox-image', 'no-such-model']) {
      const status = id === 'no-such-model' ? 404 : 200;
      await checked('/api/alpha/v1/models/{model}', { method: 'GET', url: `/api/alpha/v1/models/${id}` }, status);
      await checked('/api/beta/v1/models/{model_id}', { method: 'GET', url: `/api/beta/v1/models/${id}` }, status);
      await checked(
        '/api/gamma/v1beta/models/{modelAction}',
        { method: 'GET', url: `/api/gamma/v1beta/models/${id}` },
        status,
      );
    }
    const prompt = { model: 'sandbox-echo', messages: [{ role: 'user', content: 'Hello there' }] };
    await checked(
      '/api/beta/v1/messages/count_tokens',
      { method: 'POST', url: '/api/beta/v1/messages/count_tokens', payload: prompt },
      200,
    );
    await checked(
      '/api/gamma/v1beta/models/{modelAction}',
      { method: 'POST', url: '/api/gamma/v1beta/models/sandbox-echo:countTokens', payload: { contents: 'Hello' } },
      200,
    );
  });

  it('text on every surface, whole and streamed', async () => {
    const messages = [{ role: 'user', content: 'Hello there' }];
    await checked(
      '/api/v1/text/completions',
      { method: 'POST', url: '/api/v1/text/completions', payload: { model: 'sandbox-echo', messages } },
      200,
    );
    await checked(
      '/api/alpha/v1/chat/completions',
      {
        method: 'POST',
        url: '/api/alpha/v1/chat/completions',
        payload: { model: 'sandbox-echo', messages, stream: true },
      },
      200,
    );
    await checked(
      '/api/alpha/v1/responses',
      { method: 'POST', url: '/api/alpha/v1/responses', payload: { model: 'sandbox-echo', input: 'Hi' } },
      200,
    );
    await checked(
      '/api/alpha/v1/responses',
      { method: 'POST', url: '/api/alpha/v1/responses', payload: { model: 'sandbox-echo', input: 'Hi', stream: true } },
      200,
    );
    await checked(
      '/api/beta/v1/messages',
      { method: 'POST', url: '/api/beta/v1/messages', payload: { model: 'sandbox-echo', max_tokens: 64, messages } },
      200,
    );
    await checked(
      '/api/beta/v1/messages',
      {
        method: 'POST',
        url: '/api/beta/v1/messages',
        payload: { model: 'sandbox-echo', max_tokens: 64, messages, stream: true },
      },
      200,
    );
    const gamma = '/api/gamma/v1beta/models/{modelAction}';
    await checked(
      gamma,
      { method: 'POST', url: '/api/gamma/v1beta/models/sandbox-echo:generateContent', payload: { contents: 'Hi' } },
      200,
    );
    await checked(
      gamma,
      {
        method: 'POST',
        url: '/api/gamma/v1beta/models/sandbox-echo:streamGenerateContent?alt=sse',
        payload: { contents: 'Hi' },
      },
      200,
    );
    await checked(
      gamma,
      {
        method: 'POST',
        url: '/api/gamma/v1beta/models/sandbox-echo:streamGenerateContent',
        payload: { contents: 'Hi' },
      },
      200,
    );
    await checked(
      '/api/alpha/v1/chat/completions',
      { method: 'POST', url: '/api/alpha/v1/chat/completions', payload: { model: 'no-such-model', messages } },
      400,
    );
  });

  it('embeddings on every surface', async () => {
    await checked(
      '/api/alpha/v1/embeddings',
      {
        method: 'POST',
        url: '/api/alpha/v1/embeddings',
        payload: { model: 'sandbox-embedding', input: ['a', 'b'], encoding_format: 'float' },
      },
      200,
    );
    await checked(
      '/api/beta/v1/embeddings',
      { method: 'POST', url: '/api/beta/v1/embeddings', payload: { model: 'sandbox-embedding', input: ['a'] } },
      200,
    );
    const gamma = '/api/gamma/v1beta/models/{modelAction}';
    await checked(
      gamma,
      {
        method: 'POST',
        url: '/api/gamma/v1beta/models/sandbox-embedding:embedContent',
        payload: { content: { parts: [{ text: 'a' }] } },
      },
      200,
    );
    await checked(
      gamma,
      {
        method: 'POST',
        url: '/api/gamma/v1beta/models/sandbox-embedding:batchEmbedContents',
        payload: { requests: [{ content: { parts: [{ text: 'a' }] } }] },
      },
      200,
    );
  });

  it('image jobs, their archived outputs, and the alpha images route', async () => {
    const body = { model: 'sandbox-image', content: [{ type: 'text', text: 'a lighthouse' }] };
    await checked('/api/v1/image/estimate', { method: 'POST', url: '/api/v1/image/estimate', payload: body }, 200);
    const waited = (
      await checked(
        '/api/v1/image/generations',
        { method: 'POST', url: '/api/v1/image/generations', payload: body },
        200,
      )
    ).json<{ images: Array<{ downloadUrl: string }> }>();
    const queued = (
      await checked(
        '/api/v1/image/generations/async',
        { method: 'POST', url: '/api/v1/image/generations/async', payload: body },
        202,
      )
    ).json<{ generationId: string }>();
    await until(
      '/api/v1/image/generations/async/{generationId}',
      `/api/v1/image/generations/async/${queued.generationId}`,
      (job) => job.status === 'succeeded',
    );
    const file = await call({
      method: 'GET',
      url: new URL(waited.images[0]!.downloadUrl).pathname + new URL(waited.images[0]!.downloadUrl).search,
    });
    expect(file.statusCode).toBe(200);
    expect(
      Object.keys(started.document.paths['/api/v1/media/files/{objectKey}']!.get!.responses['200']!.content!),
    ).toContain(file.headers['content-type']);
    await checked(
      '/api/alpha/v1/images/generations',
      {
        method: 'POST',
        url: '/api/alpha/v1/images/generations',
        payload: { model: 'sandbox-image', prompt: 'a lighthouse', response_format: 'b64_json' },
      },
      200,
    );
  });

  it('video tasks, natively and on the alpha surface', async () => {
    const body = {
      model: 'sandbox-video',
      content: [{ type: 'text', text: 'a heron' }],
      duration: 1,
      resolution: '480p',
    };
    await checked('/api/v1/video/estimate', { method: 'POST', url: '/api/v1/video/estimate', payload: body }, 200);
    const task = (
      await checked(
        '/api/v1/video/generations',
        { method: 'POST', url: '/api/v1/video/generations', payload: body },
        200,
      )
    ).json<{ taskId: string }>();
    await until(
      '/api/v1/video/tasks/{taskId}',
      `/api/v1/video/tasks/${task.taskId}`,
      (view) => view.status === 'succeeded',
    );
    const job = (
      await checked(
        '/api/alpha/v1/videos',
        {
          method: 'POST',
          url: '/api/alpha/v1/videos',
          payload: { model: 'sandbox-video', prompt: 'a heron', seconds: '1' },
        },
        202,
      )
    ).json<{ id: string }>();
    await until('/api/alpha/v1/videos/{id}', `/api/alpha/v1/videos/${job.id}`, (view) => view.status === 'completed');
    const content = await call({ method: 'GET', url: `/api/alpha/v1/videos/${job.id}/content` });
    expect(content.statusCode).toBe(200);
    expect(
      Object.keys(started.document.paths['/api/alpha/v1/videos/{id}/content']!.get!.responses['200']!.content!),
    ).toContain(content.headers['content-type']);
  });

  it('audio jobs and the voice catalog', async () => {
    const voices = (await checked('/api/v1/audio/voices', { method: 'GET', url: '/api/v1/audio/voices' }, 200)).json<{
      voices: Array<{ voiceType: string }>;
    }>();
    const body = { voiceType: voices.voices[0]!.voiceType, text: 'Hello there', enableSubtitle: true };
    await checked(
      '/api/v1/audio/text-to-speech/estimate',
      { method: 'POST', url: '/api/v1/audio/text-to-speech/estimate', payload: body },
      200,
    );
    const { generationId } = (
      await checked(
        '/api/v1/audio/text-to-speech',
        { method: 'POST', url: '/api/v1/audio/text-to-speech', payload: body },
        202,
      )
    ).json<{ generationId: string }>();
    await until(
      '/api/v1/audio/generations/{generationId}',
      `/api/v1/audio/generations/${generationId}`,
      (job) => job.status === 'succeeded',
    );
  });

  it('the account API, with a session', async () => {
    const credentials = { email: `openapi-account-${Date.now()}@example.com`, password: 'a long password' };
    const signup = (
      await checked('/api/v1/auth/signup', { method: 'POST', url: '/api/v1/auth/signup', payload: credentials }, 201)
    ).json<{ token: string }>();
    const token = (
      await checked('/api/v1/auth/login', { method: 'POST', url: '/api/v1/auth/login', payload: credentials }, 200)
    ).json<{ token: string }>().token;
    const session = { authorization: `Bearer ${token}`, 'x-api-key': '' };
    const asSession = (route: string, options: InjectOptions, status: number) =>
      checked(route, { ...options, headers: session }, status);
    await asSession('/api/v1/account', { method: 'GET', url: '/api/v1/account' }, 200);
    await asSession('/api/v1/account/models', { method: 'GET', url: '/api/v1/account/models' }, 200);
    const created = (
      await asSession(
        '/api/v1/api-keys',
        { method: 'POST', url: '/api/v1/api-keys', payload: { name: 'docs', limits: { daily: 1 } } },
        201,
      )
    ).json<{ id: string }>();
    await asSession('/api/v1/api-keys', { method: 'GET', url: '/api/v1/api-keys' }, 200);
    await asSession(
      '/api/v1/api-keys/{keyId}/reveal',
      { method: 'GET', url: `/api/v1/api-keys/${created.id}/reveal` },
      200,
    );
    await asSession(
      '/api/v1/api-keys/{keyId}/usage-limit',
      { method: 'PATCH', url: `/api/v1/api-keys/${created.id}/usage-limit`, payload: { daily: null, total: 5 } },
      200,
    );
    await asSession(
      '/api/v1/api-keys/{keyId}',
      { method: 'PATCH', url: `/api/v1/api-keys/${created.id}`, payload: { name: 'renamed' } },
      200,
    );
    await asSession('/api/v1/api-keys/{keyId}', { method: 'DELETE', url: `/api/v1/api-keys/${created.id}` }, 204);
    await asSession('/api/v1/usage', { method: 'GET', url: '/api/v1/usage' }, 200);
    await asSession('/api/v1/usage/daily', { method: 'GET', url: '/api/v1/usage/daily?days=7' }, 200);
    await asSession('/api/v1/media', { method: 'GET', url: '/api/v1/media' }, 200);
    await asSession('/api/v1/auth/logout', { method: 'POST', url: '/api/v1/auth/logout' }, 204);
    expect(signup.token).not.toBe(token);
  });

  it('the admin API', async () => {
    const admin = { authorization: `Bearer ${testAdminToken}`, 'x-api-key': '' };
    const asAdmin = (route: string, options: InjectOptions, status: number) =>
      checked(route, { ...options, headers: admin }, status);
    const account = (
      await asAdmin(
        '/api/admin/v1/accounts',
        {
          method: 'POST',
          url: '/api/admin/v1/accounts',
          payload: { email: `openapi-admin-${Date.now()}@example.com`, credits: 2 },
        },
        201,
      )
    ).json<{ id: string }>();
    await asAdmin(
      '/api/admin/v1/accounts/{accountId}',
      { method: 'GET', url: `/api/admin/v1/accounts/${account.id}` },
      200,
    );
    await asAdmin(
      '/api/admin/v1/accounts/{accountId}/credits',
      { method: 'POST', url: `/api/admin/v1/accounts/${account.id}/credits`, payload: { amount: 1.5 } },
      200,
    );
    const created = (
      await asAdmin(
        '/api/admin/v1/accounts/{accountId}/api-keys',
        { method: 'POST', url: `/api/admin/v1/accounts/${account.id}/api-keys`, payload: { name: 'batch' } },
        201,
      )
    ).json<{ id: string; key: string }>();
    await checked(
      '/api/alpha/v1/chat/completions',
      {
        method: 'POST',
        url: '/api/alpha/v1/chat/completions',
        headers: { 'x-api-key': created.key },
        payload: { model: 'sandbox-echo', messages: [{ role: 'user', content: 'Hi' }] },
      },
      200,
    );
    await started.gateway.core.work.idle(10_000);
    const page = (
      await asAdmin(
        '/api/admin/v1/accounts/{accountId}/generations',
        { method: 'GET', url: `/api/admin/v1/accounts/${account.id}/generations` },
        200,
      )
    ).json<{ results: Array<{ id: string }> }>();
    await asAdmin(
      '/api/admin/v1/accounts/{accountId}/generations/{generationId}',
      { method: 'GET', url: `/api/admin/v1/accounts/${account.id}/generations/${page.results[0]!.id}` },
      200,
    );
    await asAdmin(
      '/api/admin/v1/api-keys/{keyId}',
      { method: 'PATCH', url: `/api/admin/v1/api-keys/${created.id}`, payload: { isActive: false } },
      200,
    );
    await asAdmin(
      '/api/admin/v1/api-keys/{keyId}',
      { method: 'DELETE', url: `/api/admin/v1/api-keys/${created.id}` },
      204,
    );
    await checked(
      '/api/admin/v1/accounts/{accountId}',
      {
        method: 'GET',
        url: `/api/admin/v1/accounts/${account.id}`,
        headers: { authorization: 'Bearer wrong', 'x-api-key': '' },
      },
      401,
    );
  });

  it('balance, key lookup and usage records', async () => {
    await checked('/api/compat/v1/balance', { method: 'GET', url: '/api/compat/v1/balance' }, 200);
    await checked('/api/compat/v1/api-key', { method: 'GET', url: '/api/compat/v1/api-key' }, 200);
    await checked('/api/compat/v1/usage', { method: 'GET', url: '/api/compat/v1/usage?limit=50' }, 200);
    await checked(
      '/api/compat/v1/balance',
      { method: 'GET', url: '/api/compat/v1/balance', headers: { 'x-api-key': 'gwk_unknown' } },
      401,
    );
  });
});
