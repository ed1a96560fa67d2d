import { Writable } from 'node:stream';
import { format, inspect } from 'node:util';
import { randomUUID } from 'node:crypto';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import pino from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { RateLimitStore } from '../../src/billing/rate-limits.ts';
import { readEnvironment } from '../../src/config/environment.ts';
import { parseConfig } from '../../src/config/load-config.ts';
import { Secret } from '../../src/domain/secret.ts';
import { UpstreamHttpError } from '../../src/domain/upstream-failure.ts';
import { sameSecret } from '../../src/http/secrets.ts';
import { redactedLogPaths } from '../../src/telemetry/logger.ts';
import type { ProviderTarget } from '../../src/providers/provider-adapter.ts';
import { UpstreamHttp } from '../../src/providers/shared/upstream-http.ts';
import { attachmentDisposition } from '../../src/storage/download-name.ts';
import { S3ObjectStore } from '../../src/storage/s3-object-store.ts';
import { GatewayTelemetry } from '../../src/telemetry/gateway-telemetry.ts';
import { startFakeServer } from '../fakes/fake-server.ts';

const value = 'sk-unit-7f3a9c2e5b1d';

describe('Secret', () => {
  it('prints as [redacted] in every form a value is printed', () => {
    const secret = new Secret(value);
    const printed = [
      JSON.stringify({ secret }),
      String(secret),
      `${secret}`,
      `key: ${secret}`,
      inspect(secret),
      inspect({ nested: { secret } }, { depth: 10, showHidden: true }),
      format('%s %o %O %j', secret, secret, secret, secret),
      JSON.stringify({ ...secret }),
      JSON.stringify(Object.entries(secret)),
      JSON.stringify(structuredClone({ secret })),
    ];
    for (const text of printed) expect(text).not.toContain(value);
    expect(JSON.stringify({ secret })).toBe('{"secret":"[redacted]"}');
    expect(String(secret)).toBe('[redacted]');
    expect(inspect(secret)).toBe('[redacted]');
  });

  it('gives its value back only when revealed, and derives secrets without revealing', () => {
    const secret = new Secret(value);
    expect(secret.reveal()).toBe(value);
    const bearer = secret.bearer();
    expect(bearer).toBeInstanceOf(Secret);
    expect(String(bearer)).toBe('[redacted]');
    expect(bearer.reveal()).toBe(`Bearer ${value}`);
    expect(secret.derive((key) => Buffer.from(key).toString('base64')).reveal()).toBe(
      Buffer.from(value).toString('base64'),
    );
    expect(new Secret('').isEmpty()).toBe(true);
    expect(secret.isEmpty()).toBe(false);
  });

  it('is compared in constant time against what a client sent', () => {
    expect(sameSecret(value, new Secret(value))).toBe(true);
    expect(sameSecret(`${value}x`, new Secret(value))).toBe(false);
  });
});

describe('secrets from configuration', () => {
  const yaml = [
    'providers:',
    `  main: { protocol: openai, baseUrl: "https://upstream.example/v1", apiKey: "\${MAIN_KEY}", headers: { x-org-token: "org-7f3a9c2e" } }`,
    'models: []',
    'telemetry: { metricsToken: metrics-7f3a9c2e }',
  ].join('\n');

  it('keeps provider keys, header values and the metrics token as Secrets, and a key resolved empty makes its provider inactive', () => {
    const config = parseConfig(yaml, 'gateway.yaml', { MAIN_KEY: value });
    const main = config.providers.get('main')!;
    expect(main.apiKey).toBeInstanceOf(Secret);
    expect(main.apiKey.reveal()).toBe(value);
    expect(main.headers['x-org-token']?.reveal()).toBe('org-7f3a9c2e');
    expect(main.active).toBe(true);
    expect(config.telemetry.metricsToken?.reveal()).toBe('metrics-7f3a9c2e');
    const printed = `${JSON.stringify(main)} ${inspect(config, { depth: 20 })}`;
    for (const secret of [value, 'org-7f3a9c2e', 'metrics-7f3a9c2e']) expect(printed).not.toContain(secret);
    expect(parseConfig(yaml, 'gateway.yaml', {}).providers.get('main')?.active).toBe(false);
  });

  it('refuses a broken gateway.yaml naming the line and column, never quoting the line that holds a key', () => {
    const broken = `providers:\n  main: { protocol: openai, baseUrl: "https://x.example/v1", apiKey: ${value}\n    headers: { x-org-token: org-7f3a9c2e }\nmodels: []\n`;
    const malformed = `providers:\n  main: { protocol: openai, baseUrl: "https://x.example/v1", apiKey: "${value}\${OOPS" }\nmodels: []\n`;
    for (const text of [broken, malformed]) {
      let message = '';
      try {
        parseConfig(text, 'gateway.yaml', {});
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).toMatch(/^gateway\.yaml: /);
      expect(message).not.toContain(value);
      expect(message).not.toContain('org-7f3a9c2e');
    }
  });

  it('keeps the admin token and the master secret as Secrets', () => {
    const environment = readEnvironment({
      GATEWAY_ADMIN_TOKEN: 'admin-7f3a9c2e',
      GATEWAY_SECRET: 'master-7f3a9c2e'.padEnd(40, '0'),
    });
    expect(environment.adminToken?.reveal()).toBe('admin-7f3a9c2e');
    const printed = `${JSON.stringify({ ...environment, variables: {} })} ${inspect({ ...environment, variables: {} })}`;
    expect(printed).not.toContain('admin-7f3a9c2e');
    expect(printed).not.toContain('master-7f3a9c2e');
  });

  it('keeps REDIS_URL (which may carry a password) as a Secret', () => {
    const environment = readEnvironment({ REDIS_URL: 'redis://:redis-pw-7f3a9c2e@redis.internal:6379/0' });
    expect(environment.redisUrl).toBeInstanceOf(Secret);
    expect(environment.redisUrl?.reveal()).toBe('redis://:redis-pw-7f3a9c2e@redis.internal:6379/0');
    const printed = `${JSON.stringify({ ...environment, variables: {} })} ${inspect({ ...environment, variables: {} })}`;
    expect(printed).not.toContain('redis-pw-7f3a9c2e');
    expect(readEnvironment({}).redisUrl).toBeUndefined();
  });

  it('keeps the S3 secretAccessKey as a Secret', () => {
    const config = parseConfig(
      `${yaml}\nmedia: { store: s3, s3: { bucket: media, accessKeyId: AKIA7F3A, secretAccessKey: "\${S3_SECRET}" } }`,
      'gateway.yaml',
      { S3_SECRET: 's3-secret-7f3a9c2e' },
    );
    expect(config.media.s3?.secretAccessKey).toBeInstanceOf(Secret);
    expect(config.media.s3?.secretAccessKey?.reveal()).toBe('s3-secret-7f3a9c2e');
    expect(inspect(config, { depth: 20 })).not.toContain('s3-secret-7f3a9c2e');
    expect(JSON.stringify(config.media)).not.toContain('s3-secret-7f3a9c2e');
  });
});

describe('secrets handed to their clients', () => {
  it('the S3 client signs with the revealed secretAccessKey', async () => {
    vi.useFakeTimers({ now: new Date('2026-01-02T03:04:05Z'), toFake: ['Date'] });
    try {
      const plain = { region: 'us-east-1', endpoint: 'http://127.0.0.1:9', forcePathStyle: true };
      const store = new S3ObjectStore({
        ...plain,
        bucket: 'media',
        accessKeyId: 'AKIA7F3A',
        secretAccessKey: new Secret('s3-secret-7f3a9c2e'),
        prefix: '',
      });
      const expiresAt = new Date(Date.now() + 60_000);
      const link = await store.signedLink('images/a/0.png', expiresAt);
      const direct = new S3Client({
        ...plain,
        credentials: { accessKeyId: 'AKIA7F3A', secretAccessKey: 's3-secret-7f3a9c2e' },
      });
      const command = new GetObjectCommand({
        Bucket: 'media',
        Key: 'images/a/0.png',
        ResponseContentDisposition: attachmentDisposition('images/a/0.png'),
      });
      const expected = await getSignedUrl(direct, command, { expiresIn: 60 });
      expect(new URL(link).searchParams.get('X-Amz-Signature')).toBe(
        new URL(expected).searchParams.get('X-Amz-Signature'),
      );
      expect(link).not.toContain('s3-secret-7f3a9c2e');
      await store.close();
      direct.destroy();
    } finally {
      vi.useRealTimers();
    }
  });

  it("the rate limits' Redis client connects with the revealed REDIS_URL", async () => {
    const store = new RateLimitStore({
      redisUrl: new Secret('redis://127.0.0.1:6379'),
      redisFailure: 'closed',
      keyPrefix: `secret-test-${randomUUID()}`,
    });
    try {
      await store.ready(2_000);
      const answer = await store.counter('c', { points: 5, durationSeconds: 60 }).consume('k');
      expect(answer.remainingPoints).toBe(4);
    } finally {
      await store.close();
    }
  });
});

describe('log lines', () => {
  function capture(): { logger: pino.Logger; text: () => string } {
    let text = '';
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        text += chunk.toString();
        done();
      },
    });
    return {
      logger: pino({ level: 'trace', redact: { paths: redactedLogPaths, censor: '[redacted]' } }, sink),
      text: () => text,
    };
  }

  it('fallback and retry lines name a row by provider and upstream model, never the whole row', () => {
    const { logger, text } = capture();
    const telemetry = new GatewayTelemetry(logger);
    const row = {
      providerId: 'main',
      upstreamModel: 'gpt',
      target: { apiKey: value, headers: { authorization: `Bearer ${value}` } },
    };
    telemetry.fallback({ modelId: 'm', from: row, to: row, reason: 'upstream-5xx' });
    telemetry.retry({ modelId: 'm', row, afterMs: 10, reason: 'upstream-429' });
    const lines = text()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({
      event: 'fallback',
      from: { providerId: 'main', upstreamModel: 'gpt' },
      to: { providerId: 'main', upstreamModel: 'gpt' },
    });
    expect(lines[1]).toMatchObject({ event: 'retry', providerId: 'main', upstreamModel: 'gpt' });
    expect(text()).not.toContain(value);
    expect(text()).not.toContain('target');
  });

  it('the logger censors credentials that reach a line as plain strings', () => {
    const { logger, text } = capture();
    logger.info({ apiKey: value, token: value, password: value, secret: value }, 'top level');
    logger.info(
      {
        row: {
          apiKey: value,
          headers: {
            authorization: `Bearer ${value}`,
            'x-api-key': value,
            'x-goog-api-key': value,
            cookie: `gw_session=${value}`,
          },
        },
      },
      'one level down',
    );
    logger.info(
      {
        req: { headers: { authorization: `Bearer ${value}`, 'x-api-key': value, cookie: value } },
        user: { password: value, token: value },
      },
      'a request',
    );
    expect(text()).toContain('[redacted]');
    expect(text()).not.toContain(value);
  });
});

/** A provider at `baseUrl` whose key is `value`, with a secret header of its own. */
const keyedTarget = (baseUrl: string): ProviderTarget => ({
  baseUrl,
  apiKey: new Secret(value),
  timeoutMs: 2000,
  firstByteTimeoutMs: 2000,
  connectTimeoutMs: 2000,
  maxEventCharacters: 65536,
  headers: { 'x-org-token': new Secret('org-7f3a9c2e') },
});

describe('the upstream HTTP client', () => {
  it('reveals the key and header secrets only into the request it sends, and cuts them out of an error body it relays', async () => {
    const upstream = await startFakeServer((request, response) => {
      response.writeHead(401, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({
          error: {
            message: `Incorrect API key provided: ${String(request.headers.authorization)}; org ${String(request.headers['x-org-token'])}`,
          },
        }),
      );
    });
    try {
      const target = keyedTarget(upstream.url);
      const http = new UpstreamHttp();
      const failure = await http
        .postForJson(target, { path: '/chat', headers: { authorization: target.apiKey.bearer() }, body: {} })
        .catch((error: unknown) => error);
      await http.close();
      expect(upstream.requests[0]?.headers).toMatchObject({
        authorization: `Bearer ${value}`,
        'x-org-token': 'org-7f3a9c2e',
      });
      expect(failure).toBeInstanceOf(UpstreamHttpError);
      const body = (failure as UpstreamHttpError).body;
      expect(body).toContain('Incorrect API key provided: Bearer [redacted]');
      expect(body).not.toContain(value);
      expect(body).not.toContain('org-7f3a9c2e');
    } finally {
      await upstream.close();
    }
  });

  it('cuts them out of an answer it calls a success too, as its stream arrives, and relays the first event at once', async () => {
    let release = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    const upstream = await startFakeServer(async (request, response) => {
      const credential = String(request.headers.authorization).replace('Bearer ', '');
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write('data: {"delta":"first"}\n\n');
      await released;
      // The key split between two writes, as a provider's error event may be.
      response.write(`data: {"error":{"message":"Incorrect API key provided: ${credential.slice(0, 7)}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
      response.end(`${credential.slice(7)} for org ${String(request.headers['x-org-token'])}"}}\n\n`);
    });
    const http = new UpstreamHttp();
    try {
      const target = keyedTarget(upstream.url);
      const answer = await http.postJson(target, {
        path: '/chat',
        headers: { authorization: target.apiKey.bearer() },
        body: {},
      });
      const chunks: string[] = [];
      for await (const chunk of answer.body) {
        chunks.push(String(chunk));
        // The first event came while the upstream still held the rest back.
        if (chunks.length === 1) release();
      }
      expect(chunks[0]).toBe('data: {"delta":"first"}\n\n');
      const text = chunks.join('');
      expect(text).toContain('Incorrect API key provided: [redacted] for org [redacted]');
      expect(text).not.toContain(value.slice(0, 12));
      expect(text).not.toContain('org-7f3a9c2e');
    } finally {
      release();
      await http.close();
      await upstream.close();
    }
  });
});
