import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, expectEnvelope, signup } from '../support/http-helpers.ts';
import { operatorSession } from '../support/operator-session.ts';
import { startTestGateway, type TestGateway } from '../support/test-gateway.ts';

/**
 * Moments RFC 3339 writes that no clock here holds: a leap second (JavaScript's dates have none), year 0 and a
 * year-9999 moment whose offset carries it past 9999 in UTC (PostgreSQL's timestamps hold neither). A filter
 * given one is refused with 400 naming it, never a 500 or a CSV cut short.
 */
const unheld = [
  ['since', '2016-12-31T23:59:60Z'],
  ['until', '2016-12-31T23:59:60Z'],
  ['since', '0000-01-01T00:00:00Z'],
  ['until', '9999-12-31T23:59:59-23:59'],
] as const;

describe('moments in query filters', () => {
  let gateway: TestGateway;
  let user: string;
  let operator: string;

  beforeAll(async () => {
    gateway = await startTestGateway();
    user = (await signup(gateway)).token;
    operator = (await operatorSession(gateway)).token;
  });
  afterAll(async () => {
    await gateway?.close();
  });

  const routes = [
    ['/api/v1/audit-log', () => user],
    ['/api/operator/v1/audit-log', () => operator],
    ['/api/operator/v1/usage', () => operator],
    ['/api/operator/v1/usage.csv', () => operator],
  ] as const;

  for (const [route, token] of routes)
    it.each(unheld)(`${route}?%s=%s answers 400 naming the filter`, async (field, moment) => {
      const response = await gateway.request({
        method: 'GET',
        url: `${route}?${field}=${encodeURIComponent(moment)}`,
        headers: bearer(token()),
      });
      const envelope = expectEnvelope(response, { status: 400, code: 'GW_VALIDATION', path: route });
      expect(envelope.errors[0]).toContain(field);
    });

  it('takes the moments a clock holds, the last of year 9999 in UTC included', async () => {
    for (const [route, token] of routes) {
      const response = await gateway.request({
        method: 'GET',
        url: `${route}?since=${encodeURIComponent('0001-01-01T00:00:00Z')}&until=${encodeURIComponent('9999-12-31T23:59:59Z')}`,
        headers: bearer(token()),
      });
      expect(response.statusCode, response.body).toBe(200);
    }
  });
});
