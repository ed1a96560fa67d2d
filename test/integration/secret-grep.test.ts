import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import pg from 'pg';
import type { Logger } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readEnvironment } from '../../src/config/environment.ts';
import { parseConfig } from '../../src/config/load-config.ts';
import { createGateway, type RunningGateway } from '../../src/main.ts';
import { createLogger } from '../../src/telemetry/logger.ts';
import { startFakeServer, type FakeServer, type RecordedRequest } from '../fakes/fake-server.ts';
import { gatewayBin } from '../support/gateway-cli.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';

/**
 * Every credential the gateway is configured with or shown, each distinctive, then every log event it writes
 * provoked at `trace` (upstream 5xx and 429: fallback, retry, breaker; a failed job; storage failures; a start
 * on a bad gateway.yaml; failed sign-ins; passwords changed, set and guessed; a start and a command with another
 * GATEWAY_SECRET on the same database), and all it wrote (log, spans, stderr, error answers) searched for each
 * credential in its plain, `Bearer ` and base64 forms.
 */
const secrets = {
  openaiKey: 'sk-grep-openai-Q7vX2mK9pL4tR8wZ',
  anthropicKey: 'sk-ant-grep-H3nB6cV1xJ5kM0qY',
  geminiKey: 'AIza-grep-gemini-T9rE4wU2iO7pA1sD',
  headerValue: 'org-grep-header-F6gH8jK3lZ5xC2vB',
  adminToken: 'admin-grep-token-N4mQ7wE1rT9yU3iO',
  metricsToken: 'metrics-grep-token-P2aS5dF8gH1jK4lZ',
  gatewaySecret: 'master-grep-secret-X7cV0bN3mQ6wE9rT2yU5iO8pA',
  password: 'pw-grep-Lk8Jh5Gf2Ds9',
  changedPassword: 'pw-grep-changed-Qw3Er6Ty9Ui2',
  wrongCurrentPassword: 'pw-grep-wrong-Zx4Cv7Bn1Mm5',
  operatorSetPassword: 'pw-grep-operator-Hj6Kl9Po3Iu8',
  otherGatewaySecret: 'other-grep-secret-R5tY8uI1oP4aS7dF0gH3jK6lZ9',
  openaiSecondKey: 'sk-grep-second-W3eR6tY9uI2oP5aS',
  runtimeProviderKey: 'sk-grep-runtime-Z8xC4vB7nM1qW6eR',
};
/** Credentials made during the run: the client's API key and its session token. */
const issued: Record<string, string> = {};

/** The forms a credential could be written in: as it is, as a bearer header, in base64 and base64url. */
function formsOf(secret: string): string[] {
  return [
    secret,
    `Bearer ${secret}`,
    Buffer.from(secret).toString('base64'),
    Buffer.from(secret).toString('base64url'),
    Buffer.from(`user:${secret}`).toString('base64'),
  ];
}

/** Credentials the upstream saw on each request: proof that the gateway did send them (revealed at the HTTP client). */
const seenCredentials = new Set<string>();

/**
 * One upstream for every protocol, that fails as providers do and quotes back the credential it was sent, in its
 * body (as OpenAI's "Incorrect API key provided: sk-…" does) and in its content type's parameters: the model
 * `busy` gets a 429 with a short retry-after, every other request a 500.
 */
function leakyUpstream(request: RecordedRequest, response: import('node:http').ServerResponse): void {
  const credential = String(
    request.headers.authorization ?? request.headers['x-api-key'] ?? request.headers['x-goog-api-key'] ?? '',
  );
  seenCredentials.add(credential);
  if (request.headers['x-org-token']) seenCredentials.add(String(request.headers['x-org-token']));
  const model =
    typeof request.body === 'object' && request.body !== null && 'model' in request.body
      ? String(request.body.model)
      : request.path;
  const message = `Incorrect API key provided: ${credential} (organization ${String(request.headers['x-org-token'] ?? '')})`;
  if (model.includes('quote')) {
    quotingSuccess(request, response, message);
    return;
  }
  if (model.includes('busy')) {
    response.writeHead(429, { 'content-type': echoingType('application/json', request), 'retry-after-ms': '20' });
    response.end(JSON.stringify({ error: { message, type: 'rate_limit_error', code: 'rate_limit_exceeded' } }));
    return;
  }
  response.writeHead(500, { 'content-type': echoingType('application/json', request) });
  response.end(JSON.stringify({ error: { message, type: 'server_error', code: null } }));
}

/** A content type whose parameter quotes back the credential the request was sent with. */
function echoingType(mediaType: string, request: RecordedRequest): string {
  const credential = request.headers.authorization ?? request.headers['x-api-key'] ?? request.headers['x-goog-api-key'];
  return `${mediaType}; charset=utf-8; echoed="${String(credential ?? '')}"`;
}

/**
 * An answer the upstream calls a success that quotes the credential anyway: a stream whose error event does, in
 * its protocol's form (Anthropic's `event: error`, else an `error` object), or a whole chat answer that does.
 */
function quotingSuccess(request: RecordedRequest, response: import('node:http').ServerResponse, message: string): void {
  const streamed =
    request.path.includes(':streamGenerateContent') ||
    (typeof request.body === 'object' &&
      request.body !== null &&
      'stream' in request.body &&
      request.body.stream === true);
  if (!streamed) {
    response.writeHead(200, { 'content-type': echoingType('application/json', request) });
    response.end(
      JSON.stringify({
        id: 'chatcmpl-quote',
        object: 'chat.completion',
        created: 1,
        model: 'quote',
        choices: [{ index: 0, message: { role: 'assistant', content: message }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      }),
    );
    return;
  }
  response.writeHead(200, { 'content-type': echoingType('text/event-stream', request) });
  const error = request.headers['x-api-key']
    ? `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type: 'api_error', message } })}\n\n`
    : `data: ${JSON.stringify({ error: { code: 401, message, status: 'UNAUTHENTICATED' } })}\n\n`;
  response.end(error);
}

const configYaml = (upstream: FakeServer, collector: FakeServer) =>
  [
    'providers:',
    `  openai: { protocol: openai, baseUrl: "${upstream.url}/v1", apiKey: "\${OPENAI_KEY}", apiKeys: [{ id: second, key: "\${OPENAI_KEY_TWO}" }], headers: { x-org-token: "\${ORG_TOKEN}" } }`,
    `  anthropic: { protocol: anthropic, baseUrl: "${upstream.url}/v1", apiKey: "\${ANTHROPIC_KEY}" }`,
    `  gemini: { protocol: gemini, baseUrl: "${upstream.url}/v1beta", apiKey: "\${GEMINI_KEY}" }`,
    '  sandbox: { protocol: sandbox }',
    'models:',
    '  - id: flaky',
    '    pricing: { inputPerMTok: 1, outputPerMTok: 2 }',
    '    providers:',
    '      - { provider: openai, model: boom, priority: 1 }',
    '      - { provider: sandbox, model: echo, priority: 2 }',
    '  - { id: limited, pricing: { inputPerMTok: 1, outputPerMTok: 2 }, providers: [{ provider: openai, model: busy }] }',
    '  - { id: via-anthropic, pricing: { inputPerMTok: 1, outputPerMTok: 2 }, providers: [{ provider: anthropic, model: claude-boom }] }',
    '  - { id: via-gemini, pricing: { inputPerMTok: 1, outputPerMTok: 2 }, providers: [{ provider: gemini, model: gemini-boom }] }',
    '  - { id: quoting, pricing: { inputPerMTok: 1, outputPerMTok: 2 }, providers: [{ provider: openai, model: quote }] }',
    '  - { id: quoting-anthropic, pricing: { inputPerMTok: 1, outputPerMTok: 2 }, providers: [{ provider: anthropic, model: claude-quote }] }',
    '  - { id: quoting-gemini, pricing: { inputPerMTok: 1, outputPerMTok: 2 }, providers: [{ provider: gemini, model: gemini-quote }] }',
    '  - { id: painter, outputModalities: [image], pricing: { perImage: 0.01 }, providers: [{ provider: openai, model: gpt-image-boom }] }',
    'upstream: { breakerFailures: 2, breakerCooldownMs: 60000, retryBudgetMs: 1000, maxRetries: 1 }',
    `telemetry: { metricsToken: "\${METRICS_TOKEN}", tracing: { otlpEndpoint: "${collector.url}" } }`,
  ].join('\n');

describe('secrets never reach a log line, stderr or an error answer', () => {
  let upstream: FakeServer;
  /** An OTLP/HTTP collector: the spans it is sent are searched too. */
  let collector: FakeServer;
  let database: TestDatabase;
  let gateway: RunningGateway;
  let logger: Logger;
  let dataDir: string;
  let logFile: string;
  const errorAnswers: string[] = [];
  /** Answers of upstreams that quoted a credential in what they called a success. */
  const answers: string[] = [];
  /** The admin API's answers about provider keys, successful ones included. */
  const keyAnswers: string[] = [];
  const childOutput: string[] = [];
  const processOutput: string[] = [];
  const restore: Array<() => void> = [];

  const request = async (options: InjectOptions): Promise<LightMyRequestResponse> => {
    const response = await gateway.app.inject(options);
    if (response.statusCode >= 400)
      errorAnswers.push(`${response.statusCode} ${JSON.stringify(response.headers)} ${response.body}`);
    await gateway.core.work.idle(10_000);
    return response;
  };

  beforeAll(async () => {
    // Whatever the gateway writes to this process's own stdout and stderr is searched too.
    for (const stream of [process.stdout, process.stderr]) {
      const write = stream.write.bind(stream);
      stream.write = ((chunk: string | Uint8Array, ...rest: never[]) => {
        processOutput.push(String(chunk));
        return write(chunk, ...rest);
      }) as typeof stream.write;
      restore.push(() => (stream.write = write));
    }
    upstream = await startFakeServer(leakyUpstream);
    collector = await startFakeServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{}');
    });
    dataDir = mkdtempSync(path.join(tmpdir(), 'gw-secret-grep-'));
    logFile = path.join(dataDir, 'gateway.log');
    const environment = readEnvironment({
      DATA_DIR: dataDir,
      LOG_LEVEL: 'trace',
      GATEWAY_SECRET: secrets.gatewaySecret,
      GATEWAY_ADMIN_TOKEN: secrets.adminToken,
      OPENAI_KEY: secrets.openaiKey,
      OPENAI_KEY_TWO: secrets.openaiSecondKey,
      ANTHROPIC_KEY: secrets.anthropicKey,
      GEMINI_KEY: secrets.geminiKey,
      ORG_TOKEN: secrets.headerValue,
      METRICS_TOKEN: secrets.metricsToken,
    });
    database = await createTestDatabase();
    logger = createLogger(environment, logFile);
    const config = parseConfig(configYaml(upstream, collector), 'secret-grep.yaml', environment.variables);
    gateway = await createGateway({ environment, config, storage: database.options, logger });
    await gateway.app.ready();
  });

  afterAll(async () => {
    for (const undo of restore) undo();
    await gateway?.close().catch(() => undefined);
    await upstream?.close();
    await collector?.close();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('provokes every log event at trace, and no credential is in anything written', { timeout: 120_000 }, async () => {
    const { services } = gateway.core;
    // The client's credentials: an account with a password (signed up over HTTP), its session token and an API key.
    const email = `grep-${Date.now()}@example.com`;
    const signup = await request({
      method: 'POST',
      url: '/api/v1/auth/signup',
      payload: { email, password: secrets.password },
    });
    expect(signup.statusCode, signup.body).toBe(201);
    issued.sessionToken = signup.json<{ token: string }>().token;
    const funded = await services.accounts.createAccount({
      email: `grep-funded-${Date.now()}@example.com`,
      creditsUsd: 20,
    });
    const key = (await services.apiKeys.create(funded.id, { name: 'grep key' })).key;
    issued.apiKey = key;
    // More accounts fail on the same row, so its breaker opens whatever number of accounts it needs.
    const others = await Promise.all(
      Array.from({ length: 4 }, async (_, index) => {
        const account = await services.accounts.createAccount({
          email: `grep-other-${index}-${Date.now()}@example.com`,
          creditsUsd: 5,
        });
        return (await services.apiKeys.create(account.id, { name: `grep other ${index}` })).key;
      }),
    );
    for (const [index, other] of others.entries()) issued[`otherKey${index}`] = other;
    // A webhook endpoint's signing secrets, made at creation and at rotation, and a test event sent with them.
    const endpoint = await request({
      method: 'POST',
      url: '/api/v1/webhooks/endpoints',
      headers: { 'x-api-key': key },
      payload: { url: 'https://hooks.example.com/grep', eventTypes: ['balance.low'] },
    });
    expect(endpoint.statusCode, endpoint.body).toBe(201);
    const { id: endpointId, secret: webhookSecret } = endpoint.json<{ id: string; secret: string }>();
    issued.webhookSecret = webhookSecret;
    const rotated = await request({
      method: 'POST',
      url: `/api/v1/webhooks/endpoints/${endpointId}/rotate-secret`,
      headers: { 'x-api-key': key },
    });
    issued.rotatedWebhookSecret = rotated.json<{ secret: string }>().secret;
    await request({
      method: 'POST',
      url: `/api/v1/webhooks/endpoints/${endpointId}/test`,
      headers: { 'x-api-key': key },
    });

    const chat = (apiKey: string, model: string) =>
      request({
        method: 'POST',
        url: '/api/alpha/v1/chat/completions',
        headers: { 'x-api-key': apiKey },
        payload: { model, messages: [{ role: 'user', content: 'hello' }] },
      });

    // Upstream 5xx: fallback to the sandbox row, until the row's breaker opens and it is skipped.
    for (const apiKey of [key, ...others]) {
      for (let attempt = 0; attempt < 3; attempt++) expect((await chat(apiKey, 'flaky')).statusCode).toBe(200);
    }
    // Upstream 429: a retry after its retry-after, then the 429 relayed.
    expect((await chat(key, 'limited')).statusCode).toBe(429);
    // Each protocol's credential header, in an error relayed to the client.
    expect(
      (
        await request({
          method: 'POST',
          url: '/api/beta/v1/messages',
          headers: { 'x-api-key': key },
          payload: { model: 'via-anthropic', max_tokens: 16, messages: [{ role: 'user', content: 'hello' }] },
        })
      ).statusCode,
    ).toBeGreaterThanOrEqual(500);
    expect(
      (
        await request({
          method: 'POST',
          url: `/api/gamma/v1beta/models/via-gemini:generateContent?key=${key}`,
          headers: { 'x-goog-api-key': key },
          payload: { contents: [{ role: 'user', parts: [{ text: 'hello' }] }] },
        })
      ).statusCode,
    ).toBeGreaterThanOrEqual(500);
    // Successes that quote the credential: whole, and streamed on each protocol (same-protocol relays pass the
    // stream's bytes through), each answer kept whatever its status.
    const quoted = async (options: InjectOptions) => {
      const answer = await request(options);
      answers.push(`${JSON.stringify(answer.headers)} ${answer.body}`);
    };
    const hello = [{ role: 'user', content: 'hello' }];
    for (const stream of [false, true])
      await quoted({
        method: 'POST',
        url: '/api/alpha/v1/chat/completions',
        headers: { 'x-api-key': key },
        payload: { model: 'quoting', stream, messages: hello },
      });
    await quoted({
      method: 'POST',
      url: '/api/beta/v1/messages',
      headers: { 'x-api-key': key },
      payload: { model: 'quoting-anthropic', stream: true, max_tokens: 16, messages: hello },
    });
    await quoted({
      method: 'POST',
      url: '/api/gamma/v1beta/models/quoting-gemini:streamGenerateContent?alt=sse',
      headers: { 'x-goog-api-key': key },
      payload: { contents: [{ role: 'user', parts: [{ text: 'hello' }] }] },
    });
    await quoted({
      method: 'POST',
      url: '/api/v1/text/completions',
      headers: { 'x-api-key': key },
      payload: { model: 'quoting', messages: hello },
    });
    // The client's key in every place a client puts it, and wrong ones.
    for (const headers of [
      { authorization: `Bearer ${key}` },
      { 'x-goog-api-key': key },
      { 'x-api-key': `${key}x` },
      { authorization: `Bearer ${key}x` },
      { cookie: `gw_session=${key}` },
    ]) {
      await request({ method: 'GET', url: '/api/alpha/v1/models', headers });
    }
    await request({ method: 'GET', url: `/api/gamma/v1beta/models?key=${key}x` });

    // A provider key added at runtime, listed, reweighted so requests use it, quoted back by the upstream in a
    // relayed 429, refused in a malformed change, and removed.
    const adminHeaders = { authorization: `Bearer ${secrets.adminToken}` };
    const keyCall = async (options: InjectOptions) => {
      const answer = await request({ ...options, headers: adminHeaders });
      keyAnswers.push(`${answer.statusCode} ${answer.body}`);
      return answer;
    };
    const added = await keyCall({
      method: 'POST',
      url: '/api/admin/v1/providers/openai/keys',
      payload: { key: secrets.runtimeProviderKey, label: 'grep', weight: 1 },
    });
    expect(added.statusCode, added.body).toBe(201);
    const runtimeKeyId = added.json<{ id: string }>().id;
    expect(
      (
        await keyCall({
          method: 'PATCH',
          url: `/api/admin/v1/providers/openai/keys/${runtimeKeyId}`,
          payload: { weight: 100_000 },
        })
      ).statusCode,
    ).toBe(200);
    expect((await keyCall({ method: 'GET', url: '/api/admin/v1/providers/openai/keys' })).statusCode).toBe(200);
    for (let call = 0; call < 2; call++) expect((await chat(key, 'limited')).statusCode).toBe(429);
    await keyCall({
      method: 'POST',
      url: '/api/admin/v1/providers/openai/keys',
      payload: { key: secrets.runtimeProviderKey, weight: -1 },
    });
    await keyCall({
      method: 'POST',
      url: '/api/admin/v1/providers/openai/keys',
      payload: { key: `${secrets.runtimeProviderKey} with a space` },
    });
    expect(
      (await keyCall({ method: 'DELETE', url: `/api/admin/v1/providers/openai/keys/${runtimeKeyId}` })).statusCode,
    ).toBe(204);
    const auditEntries = await gateway.core.services.audit.page(
      { action: 'provider-key.create' },
      { offset: 0, limit: 10 },
    );
    expect(auditEntries.results.length).toBeGreaterThan(0);
    keyAnswers.push(JSON.stringify(auditEntries));

    // A media job the upstream fails.
    const submitted = await request({
      method: 'POST',
      url: '/api/v1/image/generations/async',
      headers: { 'x-api-key': key },
      payload: { model: 'painter', content: [{ type: 'text', text: 'a fox' }] },
    });
    expect(submitted.statusCode, submitted.body).toBe(202);
    const jobId = submitted.json<{ generationId: string }>().generationId;
    const deadline = Date.now() + 30_000;
    for (;;) {
      const job = (
        await request({ method: 'GET', url: `/api/v1/image/generations/async/${jobId}`, headers: { 'x-api-key': key } })
      ).json<{ status: string }>();
      if (job.status === 'failed') break;
      expect(job.status).not.toBe('succeeded');
      if (Date.now() > deadline) throw new Error(`the job is still ${job.status}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }

    // The owner's password changed (a wrong current one first), and the operator's password set on an account.
    const changePassword = (currentPassword: string) =>
      request({
        method: 'PUT',
        url: '/api/v1/account/password',
        headers: { authorization: `Bearer ${issued.sessionToken}` },
        payload: { currentPassword, newPassword: secrets.changedPassword },
      });
    expect((await changePassword(secrets.wrongCurrentPassword)).statusCode).toBe(403);
    expect((await changePassword(secrets.password)).statusCode).toBe(204);
    const operatorSet = await request({
      method: 'PUT',
      url: `/api/admin/v1/accounts/${funded.id}/password`,
      headers: { authorization: `Bearer ${secrets.adminToken}` },
      payload: { password: secrets.operatorSetPassword },
    });
    expect(operatorSet.statusCode, operatorSet.body).toBe(204);
    expect(
      (
        await request({
          method: 'POST',
          url: '/api/v1/auth/login',
          payload: { email, password: secrets.changedPassword },
        })
      ).statusCode,
    ).toBe(200);

    // A server and a command started with another GATEWAY_SECRET on the same database: both refuse.
    for (const args of [['serve'], ['keys', 'create', '--account', funded.id, '--name', 'wrong secret']]) {
      const { code, output } = await runCli(args, {
        DATABASE_URL: database.url,
        DATA_DIR: path.join(dataDir, 'other-secret'),
        LOG_LEVEL: 'trace',
        PORT: '0',
        GATEWAY_SECRET: secrets.otherGatewaySecret,
        GATEWAY_ADMIN_TOKEN: secrets.adminToken,
        GATEWAY_CONFIG: path.resolve(import.meta.dirname, '../../gateway.yaml'),
      });
      expect(code, output).toBe(1);
      expect(output).toContain('GATEWAY_SECRET is not the secret this database is used with');
      childOutput.push(output);
    }

    // Sign-in failures, and the session, the admin and the metrics tokens presented right and wrong.
    await request({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password: `${secrets.password}!` } });
    await request({
      method: 'POST',
      url: '/api/v1/auth/login',
      payload: { email: `nobody-${email}`, password: secrets.password },
    });
    await request({
      method: 'POST',
      url: '/api/v1/auth/signup',
      payload: { email: 'not an email', password: secrets.password },
    });
    await request({ method: 'POST', url: '/api/v1/auth/signup', payload: { email, password: secrets.password } });
    await request({
      method: 'POST',
      url: '/api/v1/auth/login',
      payload: `{"email": "${email}", "password": "${secrets.password}"`,
      headers: { 'content-type': 'application/json' },
    });
    expect(
      (
        await request({
          method: 'GET',
          url: '/api/v1/account',
          headers: { cookie: `gw_session=${issued.sessionToken}` },
        })
      ).statusCode,
    ).toBe(200);
    await request({ method: 'GET', url: '/api/v1/account', headers: { cookie: `gw_session=${issued.sessionToken}x` } });
    await request({
      method: 'GET',
      url: '/api/v1/account',
      headers: { authorization: `Bearer ${issued.sessionToken}x` },
    });
    await request({
      method: 'DELETE',
      url: '/api/v1/account/keys/none',
      headers: { cookie: `gw_session=${issued.sessionToken}` },
    });
    expect(
      (
        await request({
          method: 'GET',
          url: `/api/admin/v1/accounts/${funded.id}`,
          headers: { authorization: `Bearer ${secrets.adminToken}` },
        })
      ).statusCode,
    ).toBe(200);
    await request({
      method: 'GET',
      url: `/api/admin/v1/accounts/${funded.id}`,
      headers: { authorization: `Bearer ${secrets.adminToken}x` },
    });
    expect(
      (await request({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${secrets.metricsToken}` } }))
        .statusCode,
    ).toBe(200);
    await request({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${secrets.metricsToken}x` } });

    // Storage failures: every connection of the gateway's database cut under it, then requests that need it.
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    // What the gateway stored by now (usage records, jobs, webhook deliveries), searched too.
    const stored: string[] = [];
    for (const table of ['generations', 'media_jobs', 'webhook_deliveries', 'audit_log', 'secret_verifiers']) {
      const { rows } = await admin.query<{ row: string }>(`SELECT row_to_json(t)::text AS row FROM ${table} t`);
      stored.push(...rows.map((row) => row.row));
    }
    await admin.query(
      'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
    );
    await request({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password: secrets.password } });
    await request({ method: 'GET', url: '/api/v1/account', headers: { cookie: `gw_session=${issued.sessionToken}` } });
    await chat(key, 'flaky');
    await request({ method: 'GET', url: '/readyz' });
    // And SQL that fails whatever the pool's state: the accounts table gone for a moment.
    await admin.query('ALTER TABLE accounts RENAME TO accounts_away');
    try {
      expect(
        (await request({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password: secrets.password } }))
          .statusCode,
      ).toBeGreaterThanOrEqual(500);
      expect(
        (
          await request({
            method: 'POST',
            url: '/api/v1/auth/signup',
            payload: { email: `again-${email}`, password: secrets.password },
          })
        ).statusCode,
      ).toBeGreaterThanOrEqual(500);
    } finally {
      await admin.query('ALTER TABLE accounts_away RENAME TO accounts');
      await admin.end();
    }

    // A start on a gateway.yaml that is not valid YAML, holding a key, and one that breaks the schema.
    const badConfigs: Array<[string, string]> = [
      [
        'broken-yaml.yaml',
        `providers:\n  main: { protocol: openai, baseUrl: "https://upstream.example/v1", apiKey: ${secrets.openaiKey}\n    headers: { x-org-token: "${secrets.headerValue}" }\nmodels: []\n`,
      ],
      [
        'bad-schema.yaml',
        `providers:\n  main: { protocol: openai, baseUrl: "https://upstream.example/v1", apiKey: ${secrets.openaiKey}, headers: { x-org-token: ${secrets.headerValue} }, extra: 1 }\nmodels: 3\n`,
      ],
      [
        'bad-reference.yaml',
        `providers:\n  main: { protocol: openai, baseUrl: "https://upstream.example/v1", apiKey: "${secrets.openaiKey}\${OOPS" }\nmodels: []\n`,
      ],
    ];
    // Each start ends at its configuration, before DATA_DIR is opened: they run side by side.
    await Promise.all(
      badConfigs.map(async ([name, text]) => {
        writeFileSync(path.join(dataDir, name), text);
        const { code, output } = await runCli(['serve'], {
          GATEWAY_CONFIG: path.join(dataDir, name),
          DATA_DIR: path.join(dataDir, 'child'),
          LOG_LEVEL: 'trace',
          PORT: '0',
          GATEWAY_SECRET: secrets.gatewaySecret,
          GATEWAY_ADMIN_TOKEN: secrets.adminToken,
        });
        expect(code, output).not.toBe(0);
        expect(output).toContain(name);
        childOutput.push(output);
      }),
    );

    // Closing the gateway sends the spans it buffered (and logs its stop).
    await gateway.close();
    await new Promise<void>((resolve) => logger.flush(() => resolve()));
    const log = readFileSync(logFile, 'utf8');
    const lines = log
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    // The events were provoked, and written.
    for (const event of ['fallback', 'retry', 'breaker'])
      expect(
        lines.some((line) => line.event === event),
        `no ${event} line`,
      ).toBe(true);
    expect(logger.level).toBe('trace');
    expect(
      lines.some((line) => typeof line.level === 'number' && line.level >= 50),
      'no error line',
    ).toBe(true);
    // The upstream was sent every configured credential: they were hidden from the output, not from the provider.
    for (const sent of [
      `Bearer ${secrets.openaiKey}`,
      `Bearer ${secrets.runtimeProviderKey}`,
      secrets.anthropicKey,
      secrets.geminiKey,
      secrets.headerValue,
    ])
      expect(seenCredentials.has(sent), sent).toBe(true);

    const traces = collector.requests
      .filter((exported) => exported.path === '/v1/traces')
      .map((exported) => JSON.stringify(exported.body));
    expect(traces.length).toBeGreaterThan(0);
    const written = {
      log,
      traces: traces.join('\n'),
      stderrAndStdout: processOutput.join(''),
      errorAnswers: errorAnswers.join('\n'),
      answers: answers.join('\n'),
      database: stored.join('\n'),
      childOutput: childOutput.join('\n'),
      providerKeyAnswersAndAudit: keyAnswers.join('\n'),
    };
    const hits: string[] = [];
    for (const [name, secret] of Object.entries({ ...secrets, ...issued })) {
      for (const form of formsOf(secret)) {
        for (const [where, text] of Object.entries(written))
          if (text.includes(form)) hits.push(`${name} (${form}) in ${where}`);
      }
    }
    expect(hits).toEqual([]);
    expect(errorAnswers.join('\n')).toContain('[redacted]');
    expect(answers.join('\n')).toContain('[redacted]');
  });
});

/**
 * The CLI as an operator runs it (bin/gateway.js on the compiled dist/, built before the suite), as its own
 * process; answers its exit code and all it wrote. Loading the sources through tsx instead took twice as long.
 */
async function runCli(args: string[], env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [gatewayBin, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { code, output };
}
