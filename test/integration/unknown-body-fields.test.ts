/**
 * The management APIs (account and sign-in, admin, operator) refuse a body field they do not declare with a
 * 400 naming it, and change nothing (and a query field, where the read's schema is closed); nothing a client sends is dropped without a word. Every operation of
 * those sections of the OpenAPI document with a JSON body is sent its documented example plus one field it
 * does not have. (The generation surfaces strip unknown fields, as the spec has it: images.test.ts, audio.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenApiDocument } from '../support/documented-gateway.ts';
import { adminHeaders, bearer, expectEnvelope, signup, uniqueEmail } from '../support/http-helpers.ts';
import { operatorSession } from '../support/operator-session.ts';
import { startTestGateway, type TestGateway } from '../support/test-gateway.ts';

interface BodyOperation {
  name: string;
  method: 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  example: unknown;
}

const families = ['account', 'admin', 'operator'] as const;
const unknownField = 'unrecognisedField';

/** The operations of a section of the document that take a JSON body, with the example the document shows. */
function bodyOperations(document: OpenApiDocument, tag: string): BodyOperation[] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item).flatMap(([method, operation]) => {
      const content = operation.requestBody?.content['application/json'];
      if (!content || !(operation as { tags?: string[] }).tags?.includes(tag)) return [];
      return [
        {
          name: `${method.toUpperCase()} ${path}`,
          method: method.toUpperCase() as BodyOperation['method'],
          path,
          example: content.example,
        },
      ];
    }),
  );
}

/** A path's parameters filled with ids of the right shape: the body is checked before anything is looked up. */
const filled = (path: string) => path.replace(/\{([^}]+)\}/g, (_whole, name: string) => `${name}_x`);

describe('the management APIs refuse a body field they do not declare', () => {
  let gateway: TestGateway;
  let document: OpenApiDocument;
  let userToken: string;
  let operatorToken: string;

  beforeAll(async () => {
    gateway = await startTestGateway();
    document = (await gateway.request({ method: 'GET', url: '/openapi.json' })).json<OpenApiDocument>();
    userToken = (await signup(gateway, uniqueEmail('unknown-fields'))).token;
    operatorToken = (await operatorSession(gateway)).token;
  });
  afterAll(async () => gateway?.close());

  const credentialFor = (tag: (typeof families)[number]) =>
    tag === 'admin' ? adminHeaders : bearer(tag === 'operator' ? operatorToken : userToken);

  it.each(families)('%s API: every operation with a JSON body answers 400 naming the field', async (tag) => {
    const operations = bodyOperations(document, tag);
    expect(operations.length, `the ${tag} section has operations with a body`).toBeGreaterThan(0);
    for (const operation of operations) {
      expect(typeof operation.example, `${operation.name} documents an example body`).toBe('object');
      const url = filled(operation.path);
      const requestId = `unknown-${Math.random().toString(36).slice(2)}`;
      const response = await gateway.request({
        method: operation.method,
        url,
        headers: { ...credentialFor(tag), 'x-request-id': requestId },
        payload: { ...(operation.example as object), [unknownField]: true },
      });
      const body = expectEnvelope(response, { status: 400, code: 'GW_VALIDATION', path: url });
      expect(
        body.errors.some((message) => message.includes(unknownField)),
        `${operation.name}: ${body.errors.join('; ')}`,
      ).toBe(true);
      // Refused before anything was done: no audit entry for the request.
      const audit = await gateway.request({
        method: 'GET',
        url: `/api/admin/v1/audit-log?requestId=${requestId}`,
        headers: adminHeaders,
      });
      expect(audit.json<{ results: unknown[] }>().results, operation.name).toEqual([]);
    }
  });

  it('names a field nested in an object it does not declare, as the client spelled it', async () => {
    const response = await gateway.request({
      method: 'POST',
      url: '/api/v1/api-keys',
      headers: bearer(userToken),
      payload: { name: 'nested', limits: { daily: 1, hourly: 2 } },
    });
    expect(expectEnvelope(response, { status: 400, code: 'GW_VALIDATION', path: '/api/v1/api-keys' }).errors).toEqual([
      'body.limits.hourly is not a recognised field',
    ]);
    const keys = await gateway.request({ method: 'GET', url: '/api/v1/api-keys', headers: bearer(userToken) });
    expect(keys.json<unknown[]>()).toEqual([]);
  });

  it('the admin API names the field exactly', async () => {
    const response = await gateway.request({
      method: 'POST',
      url: '/api/admin/v1/accounts',
      headers: adminHeaders,
      payload: { email: uniqueEmail('unknown-admin'), credit: 5 },
    });
    expect(
      expectEnvelope(response, { status: 400, code: 'GW_VALIDATION', path: '/api/admin/v1/accounts' }).errors,
    ).toEqual(['body.credit is not a recognised field']);
  });

  it('a query field a read does not declare answers 400 naming it, instead of a read unfiltered', async () => {
    for (const { url, headers } of [
      // A misspelt filter would otherwise answer the audit log of every account.
      { url: '/api/admin/v1/audit-log?acountId=acc_1', headers: adminHeaders },
      { url: '/api/operator/v1/usage?acount=acc_1', headers: bearer(operatorToken) },
    ]) {
      const path = url.split('?')[0]!;
      const [name] = url.split('?')[1]!.split('=');
      expect(
        expectEnvelope(await gateway.request({ method: 'GET', url, headers }), {
          status: 400,
          code: 'GW_VALIDATION',
          path,
        }).errors,
      ).toEqual([`querystring.${name} is not a recognised field`]);
    }
  });

  it('the operator API names the field exactly', async () => {
    const url = '/api/operator/v1/api-keys/key_x';
    const response = await gateway.request({
      method: 'PATCH',
      url,
      headers: bearer(operatorToken),
      payload: { isActive: false, name: 'renamed' },
    });
    expect(expectEnvelope(response, { status: 400, code: 'GW_VALIDATION', path: url }).errors).toEqual([
      'body.name is not a recognised field',
    ]);
  });
});
