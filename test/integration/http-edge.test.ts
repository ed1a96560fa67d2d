import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminHeaders, bearer, expectEnvelope, signup, type EnvelopeBody } from '../support/http-helpers.ts';
import { openSocket, parseRawAnswer, rawExchange, readUntilClosed, type RawAnswer } from '../support/raw-http.ts';
import { sandboxConfigYaml, startTestGateway, type TestGateway } from '../support/test-gateway.ts';

const configText = sandboxConfigYaml('server: { headersTimeoutMs: 400, requestTimeoutMs: 800, maxJsonDepth: 64 }');

/** Asserts an envelope written raw to the socket by the client-error handler, and that the server closes. */
function expectRawEnvelope(answer: RawAnswer, status: number, code: string): EnvelopeBody {
  expect(answer.status, answer.statusLine).toBe(status);
  expect(answer.headers.connection).toBe('close');
  expect(answer.headers['content-type']).toMatch(/^application\/json/);
  expect(answer.headers['x-gateway-error-code']).toBe(code);
  expect(Number(answer.headers['content-length'])).toBe(Buffer.byteLength(answer.body));
  const body = JSON.parse(answer.body) as EnvelopeBody;
  expect(Object.keys(body).sort()).toEqual(['error', 'errors', 'path', 'status', 'success', 'timestamp']);
  expect(body).toMatchObject({ status, success: false, error: { code } });
  expect(body.errors.length).toBeGreaterThan(0);
  return body;
}

describe('HTTP edge: timeouts, framing errors and the JSON parser', () => {
  let gateway: TestGateway;
  let address: string;
  let key: string;

  beforeAll(async () => {
    gateway = await startTestGateway({ configText });
    address = await gateway.app.listen({ port: 0, host: '127.0.0.1' });
    ({ key } = await gateway.createFundedKey({ credits: 1 }));
  });
  afterAll(async () => gateway?.close());

  it('a client trickling its body one byte at a time is answered 408 and disconnected', async () => {
    const socket = await openSocket(address);
    const closed = readUntilClosed(socket);
    socket.write(
      'POST /api/v1/auth/login HTTP/1.1\r\nHost: gateway\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n',
    );
    const trickle = setInterval(() => socket.writable && socket.write('{'), 100);
    const answer = parseRawAnswer(await closed);
    clearInterval(trickle);
    expect(socket.destroyed).toBe(true);
    expectRawEnvelope(answer, 408, 'GW_REQUEST_TIMEOUT');
  });

  it('a client trickling its headers is answered 408 and disconnected', async () => {
    const socket = await openSocket(address);
    const closed = readUntilClosed(socket);
    socket.write('GET /api/v1/ai/models HTTP/1.1\r\nHost: gateway\r\n');
    const trickle = setInterval(() => socket.writable && socket.write('x'), 100);
    const answer = parseRawAnswer(await closed);
    clearInterval(trickle);
    expectRawEnvelope(answer, 408, 'GW_REQUEST_TIMEOUT');
  });

  it('a 20 kB URL answers 431 in the envelope', async () => {
    const answer = await rawExchange(
      address,
      `GET /api/v1/ai/models?q=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: gateway\r\n\r\n`,
    );
    const body = expectRawEnvelope(answer, 431, 'GW_HEADERS_TOO_LARGE');
    expect(body.path).toBe('/api/v1/ai/models');
  });

  const framingErrors: [string, string][] = [
    [
      'duplicate Content-Length',
      'POST /api/v1/auth/login HTTP/1.1\r\nHost: g\r\nContent-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}',
    ],
    [
      'Content-Length with Transfer-Encoding',
      'POST /api/v1/auth/login HTTP/1.1\r\nHost: g\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n',
    ],
    ['a bare CR in a header', 'GET /api/v1/ai/models HTTP/1.1\r\nHost: g\rX-Other: 1\r\n\r\n'],
  ];
  for (const [what, request] of framingErrors) {
    it(`${what} answers 400 in the envelope and closes`, async () => {
      const body = expectRawEnvelope(await rawExchange(address, request), 400, 'GW_VALIDATION');
      expect(body.errors[0]).toMatch(/^malformed HTTP request/);
    });
  }

  it('DELETE with Content-Type application/json and no body is accepted', async () => {
    const { token } = await signup(gateway);
    const created = await gateway.request({
      method: 'POST',
      url: '/api/v1/api-keys',
      headers: bearer(token),
      payload: { name: 'to revoke' },
    });
    const keyId = created.json<{ id: string }>().id;
    const response = await gateway.request({
      method: 'DELETE',
      url: `/api/v1/api-keys/${keyId}`,
      headers: { ...bearer(token), 'content-type': 'application/json' },
    });
    expect(response.statusCode, response.body).toBe(204);
    const logout = await gateway.request({
      method: 'POST',
      url: '/api/v1/auth/logout',
      headers: { ...bearer(token), 'content-type': 'application/json' },
    });
    expect(logout.statusCode, logout.body).toBe(204);
  });

  it('an empty JSON body where the route takes a body is still refused', async () => {
    const response = await gateway.request({
      method: 'POST',
      url: '/api/admin/v1/accounts',
      headers: { ...adminHeaders, 'content-type': 'application/json' },
    });
    expectEnvelope(response, { status: 400, code: 'GW_MALFORMED_JSON', path: '/api/admin/v1/accounts' });
  });

  it('a body nested 5,000 deep answers 400 naming the limit', async () => {
    const payload = `{"model":"sandbox-echo","messages":${'['.repeat(5000)}${']'.repeat(5000)}}`;
    const response = await gateway.request({
      method: 'POST',
      url: '/api/v1/text/completions',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      payload,
    });
    const body = expectEnvelope(response, { status: 400, code: 'GW_MALFORMED_JSON', path: '/api/v1/text/completions' });
    expect(body.errors[0]).toContain('64');
  });

  it('nesting at the limit passes the parser (brackets inside strings do not count)', async () => {
    const payload = JSON.stringify({ name: `${'[{'.repeat(45)}`, limits: { daily: 1 } });
    const response = await gateway.request({
      method: 'POST',
      url: '/api/admin/v1/accounts/none/api-keys',
      headers: { ...adminHeaders, 'content-type': 'application/json' },
      payload,
    });
    expect(response.headers['x-gateway-error-code']).toBe('GW_NOT_FOUND');
    const deep = `${'{"a":'.repeat(64)}1${'}'.repeat(64)}`;
    const atLimit = await gateway.request({
      method: 'POST',
      url: '/api/v1/auth/login',
      headers: { 'content-type': 'application/json' },
      payload: deep,
    });
    expect(atLimit.headers['x-gateway-error-code']).toBe('GW_VALIDATION');
  });

  const generationRoutes: [string, string, Record<string, unknown>][] = [
    ['/api/v1/text/completions', 'maxTokens', { model: 'sandbox-echo', messages: [{ role: 'user', content: 'hi' }] }],
    [
      '/api/alpha/v1/chat/completions',
      'max_tokens',
      { model: 'sandbox-echo', messages: [{ role: 'user', content: 'hi' }] },
    ],
    ['/api/alpha/v1/responses', 'max_output_tokens', { model: 'sandbox-echo', input: 'hi' }],
    ['/api/alpha/v1/embeddings', 'dimensions', { model: 'sandbox-embedding', input: 'hi' }],
    ['/api/beta/v1/messages', 'max_tokens', { model: 'sandbox-echo', messages: [{ role: 'user', content: 'hi' }] }],
    ['/api/gamma/v1beta/models/sandbox-echo:generateContent', 'temperature', { contents: 'hi' }],
  ];
  for (const [url, field, body] of generationRoutes) {
    it(`a number overflowing to Infinity in ${field} answers 400 naming it on ${url}`, async () => {
      const payload = JSON.stringify({ ...body, [field]: 7 }).replace(`"${field}":7`, `"${field}":1e309`);
      const response = await gateway.request({
        method: 'POST',
        url,
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        payload,
      });
      const envelope = expectEnvelope(response, { status: 400, code: 'GW_VALIDATION', path: url });
      expect(envelope.errors[0]).toBe(`body.${field} is a number too large to represent`);
    });
  }

  it('a nested overflowing number is named by its path, a negative one too', async () => {
    const payload = '{"model":"sandbox-echo","messages":[{"role":"user","content":"hi","extra":[1,-2E+400]}]}';
    const response = await gateway.request({
      method: 'POST',
      url: '/api/v1/text/completions',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      payload,
    });
    expect(
      expectEnvelope(response, { status: 400, code: 'GW_VALIDATION', path: '/api/v1/text/completions' }).errors[0],
    ).toBe('body.messages[0].extra[1] is a number too large to represent');
  });

  it('prototype poisoning is still refused', async () => {
    const payload = '{"email":"a@example.com","password":"long enough password","__proto__":{"admin":true}}';
    const response = await gateway.request({
      method: 'POST',
      url: '/api/v1/auth/login',
      headers: { 'content-type': 'application/json' },
      payload,
    });
    expect(
      expectEnvelope(response, { status: 400, code: 'GW_VALIDATION', path: '/api/v1/auth/login' }).errors[0],
    ).toMatch(/^body\.__proto__ is not an accepted field name/);
    const viaConstructor =
      '{"email":"a@example.com","password":"long enough password","constructor":{"prototype":{"admin":true}}}';
    const second = await gateway.request({
      method: 'POST',
      url: '/api/v1/auth/login',
      headers: { 'content-type': 'application/json' },
      payload: viaConstructor,
    });
    expect(
      expectEnvelope(second, { status: 400, code: 'GW_VALIDATION', path: '/api/v1/auth/login' }).errors[0],
    ).toMatch(/^body\.constructor is not an accepted field name/);
  });
});
