import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/test-gateway.ts';

describe('gateway boots', () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway();
  });
  afterAll(async () => gateway?.close());

  it('answers the HEAD probes and a balance lookup', async () => {
    const { key } = await gateway.createFundedKey({ credits: 2.5 });
    expect((await gateway.request({ method: 'HEAD', url: '/api/alpha' })).statusCode).toBe(200);
    const balance = await gateway.request({
      method: 'GET',
      url: '/api/compat/v1/balance',
      headers: { 'x-api-key': key },
    });
    expect(balance.json()).toEqual({ creditBalance: 2.5 });
  });
});
