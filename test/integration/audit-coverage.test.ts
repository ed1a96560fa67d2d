import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenApiDocument } from '../support/documented-gateway.ts';
import {
  adminHeaders,
  bearer,
  keyHeaders,
  shippedConfigWith,
  signup,
  testPassword,
  uniqueEmail,
} from '../support/http-helpers.ts';
import { startTestGateway, type TestGateway } from '../support/test-gateway.ts';

const stateChangingMethods = ['post', 'put', 'patch', 'delete'];

const generation =
  "a generation on a model: billed and kept as its usage record (the account's usage, the admin API's generations with their routes), which says who, what, when, in which request and what it cost";
const submission =
  'submits a media job: its job and its usage record (with the price frozen at submission) are the record of it';
const estimate = 'prices a request without running it: changes nothing';
const tokenCount = "counts a request's tokens: changes nothing";
const gammaModelAction = `generateContent, streamGenerateContent, embedContent and batchEmbedContents are each ${generation}; countTokens ${tokenCount}`;

/**
 * The state-changing operations that leave no audit entry, and why: they use the gateway (generations, job
 * submissions, estimates, token counts) rather than change what an operator or an account configured, and the
 * usage record is where a use is kept. Every other state-changing operation must leave an entry.
 */
const usage: Record<string, string> = {
  'POST /api/v1/text/completions': generation,
  'POST /api/v1/image/estimate': estimate,
  'POST /api/v1/image/generations/async': submission,
  'POST /api/v1/image/generations': submission,
  'POST /api/v1/audio/text-to-speech/estimate': estimate,
  'POST /api/v1/audio/text-to-speech': submission,
  'POST /api/v1/audio/generation-with-reference/estimate': estimate,
  'POST /api/v1/audio/generation-with-reference': submission,
  'POST /api/v1/video/estimate': estimate,
  'POST /api/v1/video/generations': submission,
  'POST /api/alpha/v1/chat/completions': generation,
  'POST /api/alpha/v1/embeddings': generation,
  'POST /api/alpha/v1/images/generations': generation,
  'POST /api/alpha/v1/responses': generation,
  'POST /api/alpha/v1/videos': submission,
  'POST /api/beta/v1/embeddings': generation,
  'POST /api/beta/v1/messages/count_tokens': tokenCount,
  'POST /api/beta/v1/messages': generation,
  'POST /api/gamma/v1beta/models/{modelAction}': gammaModelAction,
  'POST /api/gamma/v1/models/{modelAction}': gammaModelAction,
};

interface Operation {
  name: string;
  method: string;
  path: string;
  example: unknown;
}

/** Each state-changing operation of the document, with the example of its JSON body when it has one. */
function stateChangingOperations(document: OpenApiDocument): Operation[] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => stateChangingMethods.includes(method))
      .map(([method, operation]) => ({
        name: `${method.toUpperCase()} ${path}`,
        method: method.toUpperCase(),
        path,
        example: operation.requestBody?.content['application/json']?.example,
      })),
  );
}

describe('the audit log covers every state-changing operation of the OpenAPI document', () => {
  let gateway: TestGateway;
  let operations: Operation[];

  beforeAll(async () => {
    // No job worker: a video task stays queued, so that its cancel succeeds.
    gateway = await startTestGateway({ configText: shippedConfigWith({ jobs: 'jobs:\n  concurrency: 0' }) });
    const answer = await gateway.request({ method: 'GET', url: '/openapi.json' });
    operations = stateChangingOperations(answer.json<OpenApiDocument>());
  });
  afterAll(async () => gateway?.close());

  it('names as usage only operations the document has', () => {
    expect(operations.length).toBeGreaterThan(Object.keys(usage).length);
    const names = new Set(operations.map((operation) => operation.name));
    expect(Object.keys(usage).filter((name) => !names.has(name))).toEqual([]);
  });

  /**
   * A fresh account signed in, with a key and, when the path names a task, a queued video task of that key. On
   * the operator API the account signed in is an operator, and the path's account and key are another's.
   */
  const fixtureFor = async (path: string) => {
    const email = uniqueEmail('walk');
    const session = await signup(gateway, email);
    const key = await gateway.gateway.core.services.apiKeys.create(session.account.id, { name: 'walk' });
    // A catalog model of the shipped gateway.yaml: the documented model entry's id.
    const values: Record<string, string> = {
      accountId: session.account.id,
      keyId: key.id,
      modelId: 'gpt-4o-mini',
      providerId: 'sandbox',
    };
    if (path.includes('/providers/{providerId}/keys/{keyId}')) {
      const providerKey = await gateway.gateway.core.services.providerKeys.create('sandbox', {
        key: 'sk-walk-000000000000',
      });
      values.keyId = providerKey.id;
    }
    if (path.startsWith('/api/operator/')) {
      await gateway.gateway.core.services.accounts.setRole(session.account.id, 'operator');
      const other = await gateway.createFundedKey({ credits: 100 });
      values.accountId = other.accountId;
      values.keyId = other.keyId;
    }
    if (path.includes('{taskId}')) {
      const submitted = await gateway.request({
        method: 'POST',
        url: '/api/v1/video/generations',
        headers: keyHeaders(key.key),
        payload: { model: 'sandbox-video', content: [{ type: 'text', text: 'a heron' }] },
      });
      expect(submitted.statusCode, submitted.body).toBe(200);
      values.taskId = submitted.json<{ taskId: string }>().taskId;
    }
    if (path.includes('{endpointId}')) {
      const endpoint = await gateway.gateway.core.services.webhooks.create(session.account.id, {
        url: 'https://hooks.example.com/walk',
        eventTypes: ['balance.low'],
      });
      values.endpointId = endpoint.id;
    }
    return { email, token: session.token, values };
  };

  /** The example body, made to succeed: a new email where one is created, the fixture's credentials to sign in. */
  const bodyFor = (operation: Operation, email: string): unknown => {
    if (operation.path === '/api/v1/auth/login') return { email, password: testPassword };
    if (typeof operation.example === 'object' && operation.example !== null && 'email' in operation.example)
      return { ...operation.example, email: uniqueEmail('walk-new') };
    return operation.example;
  };

  it('leaves one entry for each operation that is not usage, made with its documented example', async () => {
    const audited = operations.filter((operation) => usage[operation.name] === undefined);
    // Today: 8 of the account API and sign-in, 9 of the admin API, 5 of its catalog, 11 of the operator API (5 of
    // them its catalog), and a video task's cancel.
    expect(audited.length).toBeGreaterThanOrEqual(34);
    for (const operation of audited) {
      const { email, token, values } = await fixtureFor(operation.path);
      const url = operation.path.replace(/\{([^}]+)\}/g, (_whole, name: string) => {
        const value = values[name];
        if (value === undefined) throw new Error(`${operation.name}: the walk has no value for {${name}}: add one`);
        return value;
      });
      const requestId = `walk-${Math.random().toString(36).slice(2)}`;
      const body = bodyFor(operation, email);
      const response = await gateway.request({
        method: operation.method as 'POST' | 'PUT' | 'PATCH' | 'DELETE',
        url,
        headers: {
          ...(operation.path.startsWith('/api/admin/') ? adminHeaders : bearer(token)),
          'x-request-id': requestId,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
      });
      expect(response.statusCode, `${operation.name}: ${response.body}`).toBeLessThan(300);
      const page = await gateway.request({
        method: 'GET',
        url: `/api/admin/v1/audit-log?requestId=${requestId}`,
        headers: adminHeaders,
      });
      const entries = page.json<{
        results: Array<{ action: string; accountId?: string; subject: { type: string } }>;
      }>().results;
      expect(entries, operation.name).toHaveLength(1);
      // Every change concerns an account, but a change of the gateway's own configuration, catalog or provider keys,
      // or a provider row's test.
      if (['config', 'model', 'provider-key', 'provider-row'].includes(entries[0]?.subject.type ?? ''))
        expect(entries[0]?.accountId, operation.name).toBeUndefined();
      else expect(entries[0]?.accountId, operation.name).toEqual(expect.any(String));
    }
  });
});
