/**
 * Text PostgreSQL cannot hold (U+0000, lone surrogates) is refused at the edge with a 400 naming the field; a
 * path id that cannot exist answers 404 without a lookup; `__proto__` fields anywhere, and top-level
 * `constructor` or `prototype` fields, are refused (nested ones, as in a tool's JSON Schema, pass); and a
 * storage error that does happen is logged without the query's parameters. Before, a NUL in a job prompt, in
 * `imageAssetId` or (as `%00`) in a job id went to an insert or a select, answered 500, and the error line
 * carried `Failed query: insert into "media_jobs" … params: …` with the tenant's prompt.
 */
import { sql } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectEnvelope, keyHeaders } from '../support/http-helpers.ts';
import { startTestGateway, type TestGateway } from '../support/test-gateway.ts';
import { uncheckedRows } from '../support/unchecked-rows.ts';

/** In every prompt sent here: the captured log must never hold it. */
const marker = 'tenant-prompt-7f3a';
const nulText = `${marker} a\u0000b`;
const loneSurrogateText = `${marker} a\ud800b`;

const voicesYaml = [
  'voices:',
  '  - { voiceType: en_female_anna_uranus_bigtts, name: Anna, gender: female, age: adult, categories: [General], languages: [{ language: en-US, text: Hello }], resourceId: seed-tts-2.0 }',
].join('\n');

describe('text storage cannot hold, hostile field names and impossible ids', () => {
  let gateway: TestGateway;
  let key: string;
  const logLines: Array<Record<string, unknown>> = [];

  beforeAll(async () => {
    gateway = await startTestGateway({
      logLines,
      configText: [
        'providers:',
        '  sandbox: { protocol: sandbox }',
        // Never called: no job runs here (concurrency 0); submissions are stored and wait.
        '  speech: { protocol: speech, baseUrl: "http://127.0.0.1:9", apiKey: unused-speech-key }',
        'models:',
        '  - { id: sandbox-image, outputModalities: [image], pricing: { perImage: 0.001 }, providers: [{ provider: sandbox, model: image }] }',
        '  - { id: sandbox-video, outputModalities: [video], pricing: { perVideoSecond: 0.001 }, providers: [{ provider: sandbox, model: video }] }',
        '  - { id: sandbox-echo, outputModalities: [text], pricing: { inputPerMTok: 0.1, outputPerMTok: 0.2 }, providers: [{ provider: sandbox, model: echo }] }',
        '  - { id: seed-tts-2.0, outputModalities: [audio], pricing: { perMCharacters: 80 }, providers: [{ provider: speech, model: seed-tts-2.0 }] }',
        '  - { id: seed-audio-1.0-multilingual, inputModalities: [text, audio, image], outputModalities: [audio], pricing: { perAudioSecond: 0.01 }, providers: [{ provider: speech, model: seed-audio-1.0 }] }',
        voicesYaml,
        'jobs: { concurrency: 0, syncWaitMs: 50 }',
      ].join('\n'),
    });
    key = (await gateway.createFundedKey({ credits: 10 })).key;
  });
  afterAll(async () => {
    await gateway?.close();
  });

  /** The log so far as text: it must hold neither a failed query nor the tenant's prompt. */
  function expectCleanLog(): void {
    const text = logLines.map((line) => JSON.stringify(line)).join('\n');
    expect(text).not.toContain('Failed query');
    expect(text).not.toContain(marker);
    expect(logLines.filter((line) => line.level === 50)).toEqual([]);
  }

  // Straight to the app: the helper's wait for settlements would wait on holds of jobs that never run here.
  const post = (url: string, payload: Record<string, unknown>) =>
    gateway.app.inject({ method: 'POST', url, headers: keyHeaders(key), payload });

  /** Each job-submitting route with `text` put in its prompt, and the field the envelope must name. */
  const jobSubmissions = (text: string): Array<{ url: string; body: Record<string, unknown>; field: string }> => [
    {
      url: '/api/v1/image/generations/async',
      body: { model: 'sandbox-image', content: [{ type: 'text', text }] },
      field: 'body.content[0].text',
    },
    {
      url: '/api/v1/image/generations',
      body: { model: 'sandbox-image', content: [{ type: 'text', text }] },
      field: 'body.content[0].text',
    },
    {
      url: '/api/v1/video/generations',
      body: { model: 'sandbox-video', content: [{ type: 'text', text }] },
      field: 'body.content[0].text',
    },
    {
      url: '/api/v1/audio/text-to-speech',
      body: { voiceType: 'en_female_anna_uranus_bigtts', text },
      field: 'body.text',
    },
    {
      url: '/api/v1/audio/generation-with-reference',
      body: {
        model: 'seed-audio-1.0-multilingual',
        textPrompt: text,
        references: [{ speaker: 'en_female_anna_uranus_bigtts' }],
        format: 'mp3',
      },
      field: 'body.textPrompt',
    },
    {
      url: '/api/alpha/v1/videos',
      body: { model: 'sandbox-video', prompt: text, seconds: 2, size: '720x1280' },
      field: 'body.prompt',
    },
    { url: '/api/alpha/v1/images/generations', body: { model: 'sandbox-image', prompt: text }, field: 'body.prompt' },
    {
      url: '/api/v1/text/completions',
      body: { model: 'sandbox-echo', messages: [{ role: 'user', content: text }] },
      field: 'body.messages[0].content',
    },
    {
      url: '/api/alpha/v1/chat/completions',
      body: { model: 'sandbox-echo', messages: [{ role: 'user', content: text }] },
      field: 'body.messages[0].content',
    },
  ];

  it("the same bodies without the bad character are accepted (so the refusals below are the character's)", async () => {
    // (Alpha images waits for its job to end, which none does here.)
    for (const { url, body } of jobSubmissions(`${marker} fine`).filter(
      (route) => route.url !== '/api/alpha/v1/images/generations',
    )) {
      const response = await post(url, body);
      expect(response.statusCode, `${url}: ${response.body}`).toBeLessThan(300);
    }
  });

  for (const [name, text, wording] of [
    ['U+0000', nulText, /contains the character U\+0000/],
    ['a lone surrogate', loneSurrogateText, /contains a lone UTF-16 surrogate/],
  ] as const) {
    it(`a prompt with ${name} answers 400 naming the field on every submitting route, and nothing is logged of it`, async () => {
      const stored = await jobCount();
      for (const { url, body, field } of jobSubmissions(text)) {
        const envelope = expectEnvelope(await post(url, body), { status: 400, code: 'GW_VALIDATION', path: url });
        expect(envelope.errors[0], url).toMatch(new RegExp(`^${field.replace(/[.[\]]/g, '\\$&')} `));
        expect(envelope.errors[0], url).toMatch(wording);
        expect(envelope.errors[0], url).not.toContain(marker);
      }
      expect(await jobCount()).toBe(stored);
      expectCleanLog();
    });
  }

  it('a body with bytes that are not UTF-8 answers 400 on every JSON route, and is not served on U+FFFD', async () => {
    const textRoutes = [
      { url: '/api/v1/text/completions', body: { model: 'sandbox-echo', messages: [{ role: 'user', content: 'x' }] } },
      {
        url: '/api/alpha/v1/chat/completions',
        body: { model: 'sandbox-echo', messages: [{ role: 'user', content: 'x' }] },
      },
      {
        url: '/api/beta/v1/messages',
        body: { model: 'sandbox-echo', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] },
      },
      {
        url: '/api/gamma/v1beta/models/sandbox-echo:generateContent',
        body: { contents: [{ role: 'user', parts: [{ text: 'x' }] }] },
      },
    ];
    const stored = await jobCount();
    for (const { url, body } of [...jobSubmissions('x'), ...textRoutes]) {
      // The prompt's text, `a`, then 0xFF 0xFE (bytes no UTF-8 text holds), then `b`.
      const [before, after] = JSON.stringify(body).split(/(?<=")x(?=")/);
      const payload = Buffer.concat([Buffer.from(`${before}a`), Buffer.from([0xff, 0xfe]), Buffer.from(`b${after}`)]);
      const response = await gateway.app.inject({
        method: 'POST',
        url,
        headers: { ...keyHeaders(key), 'content-type': 'application/json' },
        payload,
      });
      const envelope = expectEnvelope(response, { status: 400, code: 'GW_MALFORMED_JSON', path: url.split('?')[0]! });
      expect(envelope.errors[0], url).toBe(
        `the JSON body is not UTF-8: the byte 0xFF at offset ${Buffer.byteLength(before!) + 1} begins no character`,
      );
    }
    expect(await jobCount()).toBe(stored);
  });

  async function jobCount(): Promise<number> {
    const [row] = await uncheckedRows<{ count: number }>(
      gateway.gateway.core.storage.db,
      sql`SELECT count(*)::int AS count FROM media_jobs`,
    );
    return row!.count;
  }

  it('an imageAssetId with U+0000 answers 400 naming it', async () => {
    const url = '/api/v1/video/generations';
    const body = {
      model: 'sandbox-video',
      content: [
        { type: 'text', text: `${marker} move` },
        { type: 'imageAssetId', assetId: 'asset_\u0000' },
      ],
    };
    const envelope = expectEnvelope(await post(url, body), { status: 400, code: 'GW_VALIDATION', path: url });
    expect(envelope.errors[0]).toMatch(/^body\.content\[1\]\.assetId contains the character U\+0000/);
    expectCleanLog();
  });

  it('a NUL or a lone surrogate in a field name, __proto__ anywhere, and a top-level constructor or prototype answer 400 naming where', async () => {
    const url = '/api/v1/text/completions';
    const cases: Array<[string, RegExp]> = [
      [
        '{"model":"sandbox-echo","messages":[{"role":"user","content":"hi","k\\u0000":1}]}',
        /^body\.messages\[0\] has a field name containing the character U\+0000/,
      ],
      [
        '{"model":"sandbox-echo","\\udc00":1,"messages":[{"role":"user","content":"hi"}]}',
        /^body has a field name containing a lone UTF-16 surrogate/,
      ],
      [
        '{"model":"sandbox-echo","messages":[{"role":"user","content":"hi","__proto__":{"x":1}}]}',
        /^body\.messages\[0\]\.__proto__ is not an accepted field name/,
      ],
      [
        '{"model":"sandbox-echo","messages":[{"role":"user","content":"hi"}],"metadata":{"a":{"__proto__":{}}}}',
        /^body\.metadata\.a\.__proto__ is not an accepted field name/,
      ],
      [
        '{"model":"sandbox-echo","messages":[{"role":"user","content":"hi"}],"prototype":1}',
        /^body\.prototype is not an accepted field name/,
      ],
      [
        '{"constructor":{},"model":"sandbox-echo","messages":[{"role":"user","content":"hi"}]}',
        /^body\.constructor is not an accepted field name/,
      ],
    ];
    for (const [payload, wording] of cases) {
      const response = await gateway.request({
        method: 'POST',
        url,
        headers: { ...keyHeaders(key), 'content-type': 'application/json' },
        payload,
      });
      expect(expectEnvelope(response, { status: 400, code: 'GW_VALIDATION', path: url }).errors[0], payload).toMatch(
        wording,
      );
    }
    for (const [route, payload] of [
      [
        '/api/alpha/v1/chat/completions',
        '{"model":"sandbox-echo","constructor":1,"messages":[{"role":"user","content":"hi"}]}',
      ],
      [
        '/api/beta/v1/messages',
        '{"model":"sandbox-echo","max_tokens":10,"prototype":{},"messages":[{"role":"user","content":"hi"}]}',
      ],
      [
        '/api/gamma/v1beta/models/sandbox-echo:generateContent',
        '{"contents":"hi","generationConfig":{"__proto__":{"temperature":1}}}',
      ],
    ] as const) {
      const response = await gateway.request({
        method: 'POST',
        url: route,
        headers: { ...keyHeaders(key), 'content-type': 'application/json' },
        payload,
      });
      expect(expectEnvelope(response, { status: 400, code: 'GW_VALIDATION', path: route }).errors[0], route).toMatch(
        /is not an accepted field name/,
      );
    }
  });

  it("constructor and prototype inside free-form objects (a tool's JSON Schema, metadata) are ordinary property names on every surface", async () => {
    const schema = {
      type: 'object',
      properties: {
        constructor: { type: 'string' },
        prototype: { type: 'object', properties: { prototype: { type: 'string' } } },
      },
    };
    const requests: Array<[string, Record<string, unknown>]> = [
      [
        '/api/alpha/v1/chat/completions',
        {
          model: 'sandbox-echo',
          messages: [{ role: 'user', content: 'hi' }],
          tools: [{ type: 'function', function: { name: 'f', parameters: schema } }],
          metadata: { prototype: 'x', constructor: 'y' },
        },
      ],
      [
        '/api/beta/v1/messages',
        {
          model: 'sandbox-echo',
          max_tokens: 10,
          messages: [{ role: 'user', content: 'hi' }],
          tools: [{ name: 'f', input_schema: schema }],
          metadata: { prototype: 'x' },
        },
      ],
      [
        '/api/gamma/v1beta/models/sandbox-echo:generateContent',
        {
          contents: 'hi',
          tools: [{ functionDeclarations: [{ name: 'f', parameters: schema }] }],
          generationConfig: { responseMimeType: 'application/json', responseSchema: schema },
        },
      ],
    ];
    for (const [route, payload] of requests) {
      const response = await gateway.request({ method: 'POST', url: route, headers: keyHeaders(key), payload });
      expect(response.statusCode, `${route}: ${response.body}`).toBe(200);
    }
  });

  it('U+0000 in a query string answers 400 naming the parameter', async () => {
    for (const url of [
      '/api/v1/usage?model=a%00b',
      '/api/compat/v1/usage?model=%00',
      '/api/v1/ai/models?outputModalities=text%00',
    ]) {
      const response = await gateway.request({ method: 'GET', url, headers: keyHeaders(key) });
      expect(response.statusCode, `${url}: ${response.body}`).toBe(400);
      expect(response.json<{ errors: string[] }>().errors[0], url).toMatch(
        /^querystring\.\w+ contains the character U\+0000/,
      );
    }
    expectCleanLog();
  });

  /** Every route that looks a job up by the id in its path. */
  const jobLookups = (id: string): Array<{ method: 'GET' | 'POST'; url: string }> => [
    { method: 'GET', url: `/api/v1/image/generations/async/${id}` },
    { method: 'GET', url: `/api/v1/video/tasks/${id}` },
    { method: 'POST', url: `/api/v1/video/tasks/${id}/cancel` },
    { method: 'GET', url: `/api/v1/audio/generations/${id}` },
    { method: 'GET', url: `/api/alpha/v1/videos/${id}` },
    { method: 'GET', url: `/api/alpha/v1/videos/${id}/content` },
    { method: 'GET', url: `/api/v1/usage/${id}` },
  ];

  it('an id that cannot exist (%00, a character outside the id alphabet, too long) answers 404 on every job lookup and cancel', async () => {
    const before = await jobSnapshot();
    for (const id of ['%00', 'gen_%00', 'gen_abc%00', 'gen_a%24b', 'gen_%F0%9F%98%80', 'a'.repeat(101), 'gen_a.b']) {
      for (const { method, url } of jobLookups(id)) {
        const response: LightMyRequestResponse = await gateway.request({ method, url, headers: keyHeaders(key) });
        const envelope = expectEnvelope(response, { status: 404, code: 'GW_NOT_FOUND', path: url });
        expect(envelope.errors[0], url).toMatch(/^no such resource: params\./);
      }
    }
    expect(await jobSnapshot()).toEqual(before);
    expectCleanLog();
  });

  it('an id of the right form that names nothing still answers 404 from the lookup', async () => {
    for (const { method, url } of jobLookups('gen_0123456789abcdef0123456789abcdef')) {
      const response = await gateway.request({ method, url, headers: keyHeaders(key) });
      expect(response.statusCode, `${url}: ${response.body}`).toBe(404);
      expect(response.json<{ errors: string[] }>().errors[0], url).not.toMatch(/^no such resource: params\./);
    }
  });

  async function jobSnapshot(): Promise<unknown> {
    return uncheckedRows(gateway.gateway.core.storage.db, sql`SELECT id, state FROM media_jobs ORDER BY id`);
  }

  it('a storage error is logged with its code, constraint and table, never its query or parameters', async () => {
    // A constraint the database enforces and the edge does not know: the insert of this job fails in storage.
    const refused = 'storage-refused-9c1e';
    await uncheckedRows(
      gateway.gateway.core.storage.db,
      sql.raw(
        `ALTER TABLE media_jobs ADD CONSTRAINT refuses_marked_prompts CHECK (position('${refused}' in request::text) = 0) NOT VALID`,
      ),
    );
    try {
      const url = '/api/v1/image/generations/async';
      const before = logLines.length;
      const response = await post(url, {
        model: 'sandbox-image',
        content: [{ type: 'text', text: `${refused} ${marker} private words` }],
      });
      expectEnvelope(response, { status: 500, code: 'GW_INTERNAL', path: url });
      const lines = logLines.slice(before).filter((line) => line.level === 50);
      expect(lines.length).toBeGreaterThan(0);
      const err = lines[0]!.err as Record<string, unknown>;
      expect(err).toMatchObject({
        type: 'StorageQueryError',
        code: '23514',
        constraint: 'refuses_marked_prompts',
        table: 'media_jobs',
        statement: 'insert',
      });
      const text = JSON.stringify(logLines.slice(before));
      for (const leak of ['Failed query', 'params', refused, marker, 'private words', 'Failing row'])
        expect(text).not.toContain(leak);
    } finally {
      await uncheckedRows(
        gateway.gateway.core.storage.db,
        sql`ALTER TABLE media_jobs DROP CONSTRAINT refuses_marked_prompts`,
      );
      logLines.length = 0;
    }
  });
});
