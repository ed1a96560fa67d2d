import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminHeaders, bearer, expectEnvelope, keyHeaders, signup, uniqueEmail } from '../support/http-helpers.ts';
import { startTestGateway, type TestGateway } from '../support/test-gateway.ts';

const bodyLimitBytes = 2048;

/** A small catalog with the built-in sandbox provider and a 2 KiB body limit. */
const configText = `
providers:
  sandbox:
    protocol: sandbox
models:
  - id: sandbox-echo
    name: Sandbox echo
    inputModalities: [text]
    outputModalities: [text]
    pricing: { inputPerMTok: 0.1, outputPerMTok: 0.2 }
    providers:
      - { provider: sandbox, model: echo }
server:
  bodyLimitBytes: ${bodyLimitBytes}
`;

describe('error envelope', () => {
  let gateway: TestGateway;
  let key: string;
  let session: string;

  beforeAll(async () => {
    gateway = await startTestGateway({ configText });
    key = (await gateway.createFundedKey({ credits: 1 })).key;
    session = (await signup(gateway)).token;
  });
  afterAll(async () => gateway?.close());

  it('the gateway under test really runs with the small body limit', () => {
    expect(gateway.config.server.bodyLimitBytes).toBe(bodyLimitBytes);
  });

  // Which field each refused body names is claimed on the schemas in test/unit/request-body-schemas.test.ts.
  describe('400 validation', () => {
    it('names the field whose type is wrong', async () => {
      const response = await gateway.request({
        method: 'POST',
        url: '/api/v1/api-keys',
        headers: keyHeaders(key),
        payload: { name: 123 },
      });
      const body = expectEnvelope(response, { status: 400, code: 'GW_VALIDATION', path: '/api/v1/api-keys' });
      expect(body.errors.join(' ')).toContain('name');
    });
  });

  describe('404 unknown route', () => {
    it('GET of an unknown route, with the query left out of path', async () => {
      const response = await gateway.request({
        method: 'GET',
        url: '/api/v1/no-such-thing?x=1&y=2',
        headers: keyHeaders(key),
      });
      const body = expectEnvelope(response, { status: 404, code: 'GW_ROUTE_NOT_FOUND', path: '/api/v1/no-such-thing' });
      expect(body.errors.join(' ')).toContain('/api/v1/no-such-thing');
    });

    it('POST of an unknown route', async () => {
      const response = await gateway.request({
        method: 'POST',
        url: '/api/nowhere',
        headers: keyHeaders(key),
        payload: { a: 1 },
      });
      expectEnvelope(response, { status: 404, code: 'GW_ROUTE_NOT_FOUND', path: '/api/nowhere' });
    });

    it('a known path with a method it does not have', async () => {
      const response = await gateway.request({
        method: 'PUT',
        url: '/api/compat/v1/balance',
        headers: keyHeaders(key),
      });
      expectEnvelope(response, { status: 404, code: 'GW_ROUTE_NOT_FOUND', path: '/api/compat/v1/balance' });
    });

    it('a missing resource behind a known route uses the same envelope', async () => {
      const response = await gateway.request({
        method: 'GET',
        url: '/api/v1/ai/models/no-such-model?x=1',
        headers: keyHeaders(key),
      });
      expectEnvelope(response, { status: 404, code: 'GW_NOT_FOUND', path: '/api/v1/ai/models/no-such-model' });
    });
  });

  describe('400 malformed or empty JSON', () => {
    it('malformed JSON', async () => {
      const response = await gateway.request({
        method: 'POST',
        url: '/api/v1/api-keys',
        headers: { ...keyHeaders(key), 'content-type': 'application/json' },
        payload: '{"name": "unfinished',
      });
      expectEnvelope(response, { status: 400, code: 'GW_MALFORMED_JSON', path: '/api/v1/api-keys' });
    });

    it('malformed JSON before authentication is known still gets the envelope on a public route', async () => {
      const response = await gateway.request({
        method: 'POST',
        url: '/api/v1/auth/login?next=x',
        headers: { 'content-type': 'application/json' },
        payload: '{email:',
      });
      expectEnvelope(response, { status: 400, code: 'GW_MALFORMED_JSON', path: '/api/v1/auth/login' });
    });

    it('an empty body sent as application/json', async () => {
      const response = await gateway.request({
        method: 'POST',
        url: '/api/v1/api-keys',
        headers: { ...keyHeaders(key), 'content-type': 'application/json' },
        payload: '',
      });
      expectEnvelope(response, { status: 400, code: 'GW_MALFORMED_JSON', path: '/api/v1/api-keys' });
    });

    it('a JSON value of the wrong kind (an array where an object is expected)', async () => {
      const response = await gateway.request({
        method: 'POST',
        url: '/api/v1/api-keys',
        headers: { ...keyHeaders(key), 'content-type': 'application/json' },
        payload: '[]',
      });
      expectEnvelope(response, { status: 400, code: 'GW_VALIDATION', path: '/api/v1/api-keys' });
    });

    it('a body-less POST where a body is required', async () => {
      const response = await gateway.request({ method: 'POST', url: '/api/v1/api-keys', headers: keyHeaders(key) });
      expect(response.statusCode).toBe(400);
      expectEnvelope(response, { status: 400, code: 'GW_VALIDATION', path: '/api/v1/api-keys' });
    });
  });

  describe('415 unsupported content type', () => {
    it('a text/plain body', async () => {
      const response = await gateway.request({
        method: 'POST',
        url: '/api/v1/api-keys',
        headers: { ...keyHeaders(key), 'content-type': 'text/plain' },
        payload: 'name=hello',
      });
      const body = expectEnvelope(response, {
        status: 415,
        code: 'GW_UNSUPPORTED_MEDIA_TYPE',
        path: '/api/v1/api-keys',
      });
      expect(body.errors.join(' ')).toContain('application/json');
    });

    it('a form-encoded body on the admin API', async () => {
      const response = await gateway.request({
        method: 'POST',
        url: '/api/admin/v1/accounts',
        headers: { ...adminHeaders, 'content-type': 'application/x-www-form-urlencoded' },
        payload: 'email=a%40example.com',
      });
      expectEnvelope(response, { status: 415, code: 'GW_UNSUPPORTED_MEDIA_TYPE', path: '/api/admin/v1/accounts' });
    });
  });

  describe('415 encoded body', () => {
    it('a gzip-encoded JSON body is refused as encoded, not read as JSON that is not UTF-8', async () => {
      const response = await gateway.request({
        method: 'POST',
        url: '/api/v1/api-keys',
        headers: { ...keyHeaders(key), 'content-type': 'application/json', 'content-encoding': 'gzip' },
        payload: gzipSync(JSON.stringify({ name: 'zipped' })),
      });
      const body = expectEnvelope(response, {
        status: 415,
        code: 'GW_UNSUPPORTED_MEDIA_TYPE',
        path: '/api/v1/api-keys',
      });
      expect(body.errors).toEqual(['a body encoded as "gzip" is not accepted: send it uncompressed']);
    });
  });

  describe('413 oversized body', () => {
    it('a body over the configured limit answers 413', async () => {
      const payload = JSON.stringify({ name: 'big', padding: 'x'.repeat(bodyLimitBytes + 100) });
      const response = await gateway.request({
        method: 'POST',
        url: '/api/v1/api-keys?from=test',
        headers: { ...keyHeaders(key), 'content-type': 'application/json' },
        payload,
      });
      const body = expectEnvelope(response, { status: 413, code: 'GW_PAYLOAD_TOO_LARGE', path: '/api/v1/api-keys' });
      expect(body.errors.join(' ')).toContain(String(bodyLimitBytes));
    });

    it('a body just under the limit is accepted (so the limit is the configured one, not a default)', async () => {
      // Padded with JSON white space: the route refuses a field it does not declare.
      const bare = JSON.stringify({ name: 'small' });
      const payload = `${bare.slice(0, -1)}${' '.repeat(bodyLimitBytes - bare.length - 10)}}`;
      expect(Buffer.byteLength(payload)).toBeLessThan(bodyLimitBytes);
      const response = await gateway.request({
        method: 'POST',
        url: '/api/v1/api-keys',
        headers: { ...bearer(session), 'content-type': 'application/json' },
        payload,
      });
      expect(response.statusCode, response.body).toBe(201);
      expect(response.json<{ name: string }>().name).toBe('small');
    });
  });

  describe('400 unsupported query parameter values', () => {
    it.each([
      ['limit=abc', 'limit'],
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['offset=-1', 'offset'],
      ['offset=1.5', 'offset'],
    ])('GET /api/compat/v1/usage?%s', async (query, field) => {
      const response = await gateway.request({
        method: 'GET',
        url: `/api/compat/v1/usage?${query}`,
        headers: keyHeaders(key),
      });
      const body = expectEnvelope(response, { status: 400, code: 'GW_VALIDATION', path: '/api/compat/v1/usage' });
      expect(body.errors.join(' ')).toContain(field);
    });

    it('a malformed percent-encoding in the path answers 400, not 500', async () => {
      const response = await gateway.request({
        method: 'GET',
        url: '/api/v1/ai/models/%E0%A4%A?x=1',
        headers: keyHeaders(key),
      });
      expectEnvelope(response, { status: 400, code: 'GW_VALIDATION', path: '/api/v1/ai/models/%E0%A4%A' });
    });

    it('an unknown modality in the model list filter', async () => {
      const response = await gateway.request({
        method: 'GET',
        url: '/api/v1/ai/models?outputModalities=smell',
        headers: keyHeaders(key),
      });
      const body = expectEnvelope(response, { status: 400, code: 'GW_VALIDATION', path: '/api/v1/ai/models' });
      expect(body.errors.join(' ')).toContain('outputModalities');
    });
  });

  describe('other statuses share the envelope', () => {
    it('401', async () => {
      expectEnvelope(await gateway.request({ method: 'GET', url: '/api/compat/v1/balance?x=1' }), {
        status: 401,
        code: 'GW_UNAUTHENTICATED',
        path: '/api/compat/v1/balance',
      });
    });

    it('403', async () => {
      const response = await gateway.request({
        method: 'GET',
        url: '/api/compat/v1/api-key',
        headers: bearer(session),
      });
      expectEnvelope(response, { status: 403, code: 'GW_KEY_REQUIRED', path: '/api/compat/v1/api-key' });
    });

    it('409', async () => {
      const email = uniqueEmail();
      await signup(gateway, email);
      const response = await gateway.request({
        method: 'POST',
        url: '/api/v1/auth/signup',
        payload: { email, password: 'another password' },
      });
      expectEnvelope(response, { status: 409, code: 'GW_CONFLICT', path: '/api/v1/auth/signup' });
    });

    it('errors carry a request id header, and a sane client request id is echoed', async () => {
      const response = await gateway.request({
        method: 'GET',
        url: '/api/v1/nope',
        headers: { 'x-request-id': 'client-req-42' },
      });
      expectEnvelope(response, { status: 404, code: 'GW_ROUTE_NOT_FOUND', path: '/api/v1/nope' });
      expect(response.headers['x-request-id']).toBe('client-req-42');
    });
  });
});
