/**
 * Routing strategies through the whole pipeline: the row each strategy puts first serves the request, and the
 * usage record's route names the strategy (when the model names one) and the key the row was sent with.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/test-gateway.ts';

/** A model of two sandbox rows, `[provider, the row's extra fields]` each, in priority order. */
const model = (id: string, routing: string | undefined, rows: Array<[string, string]>) =>
  [
    `  - id: ${id}`,
    '    pricing: { inputPerMTok: 1, outputPerMTok: 1 }',
    ...(routing ? [`    routing: ${routing}`] : []),
    '    providers:',
    ...rows.map(
      ([provider, extra], index) => `      - { provider: ${provider}, model: echo, priority: ${index + 1}${extra} }`,
    ),
  ].join('\n');

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
});
