/**
 * Routing strategies through the whole pipeline: the row each strategy puts first serves the request, and the
 * usage record's route names the strategy (when the model names one) and the key the row was sent with; a
 * media job's record, written by the job worker, names them as a request's does.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/test-gateway.ts';

/** A catalog entry of sandbox rows, `[provider, the row's extra fields]` each, in priority order. */
const modelYaml = ({
  id,
  routing,
  rows,
  entry = '    pricing: { inputPerMTok: 1, outputPerMTok: 1 }',
  upstream = 'echo',
}: {
  id: string;
  routing: string | undefined;
  rows: Array<[string, string]>;
  /** The entry's lines between its id and its routing (modalities, pricing). */
  entry?: string;
  upstream?: string;
}) =>
  [
    `  - id: ${id}`,
    entry,
    ...(routing ? [`    routing: ${routing}`] : []),
    '    providers:',
    ...rows.map(
      ([provider, extra], index) =>
        `      - { provider: ${provider}, model: ${upstream}, priority: ${index + 1}${extra} }`,
    ),
  ].join('\n');

/** A chat model of two sandbox rows. */
const model = (id: string, routing: string | undefined, rows: Array<[string, string]>) =>
  modelYaml({ id, routing, rows });

/** A media model whose rows `price` orders `second` first; `routing` names the strategy or none. */
const mediaModel = (
  id: string,
  routing: string | undefined,
  { entry, upstream }: { entry: string; upstream: string },
) =>
  modelYaml({
    id,
    routing,
    rows: [
      ['first', ', cost: { inputPerMTok: 5 }'],
      ['second', ', cost: { inputPerMTok: 1 }'],
    ],
    entry,
    upstream,
  });

const imageEntry = '    outputModalities: [image]\n    pricing: { perImage: 0.01 }';

/** Each kind of media job: where it is submitted and its body. */
const jobKinds = {
  image: {
    url: '/api/v1/image/generations/async',
    body: { model: 'job-image', content: [{ type: 'text', text: 'a quiet harbour' }] },
  },
  video: {
    url: '/api/v1/video/generations',
    body: { model: 'job-video', content: [{ type: 'text', text: 'a quiet harbour' }], duration: 2 },
  },
  'text-to-speech': {
    url: '/api/v1/audio/text-to-speech',
    body: { voiceType: 'en_female_route_bigtts', text: 'a quiet harbour' },
  },
  'reference audio': {
    url: '/api/v1/audio/generation-with-reference',
    body: { model: 'job-reference', textPrompt: 'a quiet harbour' },
  },
};

describe('routing strategies in usage records', () => {
  let gateway: TestGateway;
  let key: string;
  let accountId: string;

  beforeAll(async () => {
    gateway = await startTestGateway({
      configText: [
        'providers:',
        '  first: { protocol: sandbox }',
        '  second: { protocol: sandbox }',
        // Rows of their own for latency: a row's latency is the row's, whichever model it serves.
        '  third: { protocol: sandbox }',
        '  fourth: { protocol: sandbox }',
        'models:',
        model('by-priority', undefined, [
          ['first', ', weight: 0, cost: { inputPerMTok: 9 }'],
          ['second', ', cost: { inputPerMTok: 1 }'],
        ]),
        model('by-price', 'price', [
          ['first', ', cost: { inputPerMTok: 5, outputPerMTok: 5 }'],
          ['second', ', cost: { inputPerMTok: 1 }'],
        ]),
        model('by-weight', 'weighted', [
          ['first', ', weight: 0'],
          ['second', ', weight: 5'],
        ]),
        model('by-latency', 'latency', [
          ['third', ''],
          ['fourth', ''],
        ]),
        mediaModel('job-image', 'price', { entry: imageEntry, upstream: 'image' }),
        mediaModel('job-image-priority', undefined, { entry: imageEntry, upstream: 'image' }),
        mediaModel('job-video', 'price', {
          entry: '    outputModalities: [video]\n    pricing: { perVideoSecond: 0.01 }',
          upstream: 'video',
        }),
        mediaModel('job-tts', 'price', {
          entry: '    outputModalities: [audio]\n    pricing: { perMCharacters: 60 }',
          upstream: 'speech',
        }),
        mediaModel('job-reference', 'price', {
          entry:
            '    inputModalities: [text, audio]\n    outputModalities: [audio]\n    pricing: { perAudioSecond: 0.01 }',
          upstream: 'audio-reference',
        }),
        'voices:',
        '  - { voiceType: en_female_route_bigtts, name: Route, gender: female, age: adult, categories: [General], languages: [{ language: en-US, text: Hello }], resourceId: job-tts }',
        'jobs: { idlePollMs: 50, taskPollMs: 50 }',
      ].join('\n'),
    });
    ({ key, accountId } = await gateway.createFundedKey());
  });
  afterAll(async () => gateway?.close());

  /** Generates on `modelId`, and answers the route its usage record keeps. */
  async function routeOf(modelId: string): Promise<Record<string, unknown>> {
    const answer = await gateway.request({
      method: 'POST',
      url: '/api/alpha/v1/chat/completions',
      headers: { authorization: `Bearer ${key}` },
      payload: { model: modelId, messages: [{ role: 'user', content: 'route me' }] },
    });
    expect(answer.statusCode, answer.body).toBe(200);
    const page = await gateway.gateway.core.services.usage.auditedPage(accountId, {
      model: modelId,
      limit: 1,
      offset: 0,
    });
    const route = page.results[0]?.route;
    if (!route) throw new Error(`no route recorded for ${modelId}`);
    return { ...route };
  }

  /** Submits a media job and answers the route of its usage record once the job worker has written it. */
  async function jobRouteOf(url: string, body: Record<string, unknown>): Promise<Record<string, unknown>> {
    const submitted = await gateway.request({
      method: 'POST',
      url,
      headers: { authorization: `Bearer ${key}` },
      payload: body,
    });
    expect(submitted.statusCode, submitted.body).toBeLessThan(300);
    const { generationId } = submitted.json<{ generationId: string }>();
    for (let read = 0; read < 400; read += 1) {
      const page = await gateway.gateway.core.services.usage.auditedPage(accountId, { limit: 20, offset: 0 });
      const recorded = page.results.find((result) => result.id === generationId);
      if (recorded) {
        expect(recorded.status).toBe('succeeded');
        if (!recorded.route) throw new Error(`no route recorded for job ${generationId}`);
        return { ...recorded.route };
      }
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error(`job ${generationId} was not recorded`);
  }

  it('priority, the default, keeps the configured order and writes no strategy', async () => {
    const route = await routeOf('by-priority');
    expect(route.providerId).toBe('first');
    expect(route).not.toHaveProperty('strategy');
    // A provider with its single key (here none: the sandbox) names no key.
    expect(route).not.toHaveProperty('keyId');
  });

  it('price sends to the row that costs the operator least, and says so', async () => {
    expect(await routeOf('by-price')).toMatchObject({ providerId: 'second', strategy: 'price', fallbacks: [] });
  });

  it('weighted never puts a row of weight 0 first', async () => {
    for (let request = 0; request < 5; request += 1)
      expect(await routeOf('by-weight')).toMatchObject({ providerId: 'second', strategy: 'weighted' });
  });

  it('latency tries a row without samples before the measured ones', async () => {
    expect(await routeOf('by-latency')).toMatchObject({ providerId: 'third', strategy: 'latency' });
    // `third` has a sample now, `fourth` none: it is tried.
    expect(await routeOf('by-latency')).toMatchObject({ providerId: 'fourth', strategy: 'latency' });
  });

  it('names the key a row was sent with once its provider has named keys', async () => {
    const added = await gateway.gateway.core.services.providerKeys.create('first', {
      key: 'sk-routing-test-00001111',
      weight: 1_000_000,
    });
    const route = await routeOf('by-priority');
    expect(route).toMatchObject({ providerId: 'first', keyId: added.id });
    await gateway.gateway.core.services.providerKeys.remove('first', added.id);
    expect(await routeOf('by-priority')).toMatchObject({ providerId: 'first' });
    expect(await routeOf('by-priority')).not.toHaveProperty('keyId');
  });

  it.each(Object.entries(jobKinds))(
    'names the strategy and the key in the usage record of %s jobs',
    async (_kind, { url, body }) => {
      const added = await gateway.gateway.core.services.providerKeys.create('second', {
        key: 'sk-routing-test-00002222',
        weight: 1_000_000,
      });
      try {
        expect(await jobRouteOf(url, body)).toMatchObject({
          providerId: 'second',
          strategy: 'price',
          keyId: added.id,
          fallbacks: [],
        });
      } finally {
        await gateway.gateway.core.services.providerKeys.remove('second', added.id);
      }
    },
  );

  it('names no strategy for a job whose model names none', async () => {
    const route = await jobRouteOf(jobKinds.image.url, { ...jobKinds.image.body, model: 'job-image-priority' });
    expect(route.providerId).toBe('first');
    expect(route).not.toHaveProperty('strategy');
  });
});
