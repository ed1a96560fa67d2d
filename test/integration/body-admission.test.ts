/**
 * A large body is read only for a caller that may spend: a key with no credit left, or at a spend cap, is
 * refused as soon as its headers are in, on every model surface, before the gateway reads (let alone parses,
 * validates and decodes) megabytes of prompt. Routes any caller reaches without a credential (an unknown route,
 * signing in or up) do not read megabytes either. The proof needs no clock: the body is never sent whole, so only
 * an answer given before reading it can arrive.
 */
import type { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminHeaders, type EnvelopeBody } from '../support/http-helpers.ts';
import { openSocket, parseRawAnswer } from '../support/raw-http.ts';
import { sandboxConfigYaml, startTestGateway, type TestGateway } from '../support/test-gateway.ts';

/** The first whole answer written on the socket: its head and as much body as its content-length says. */
function firstAnswer(socket: Socket): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      if (split === -1) return;
      const length = Number(/content-length:\s*(\d+)/i.exec(text.slice(0, split))?.[1]);
      if (text.length - split - 4 >= length) resolve(text);
    });
    socket.once('close', () => reject(new Error(`closed before a whole answer: ${text}`)));
  });
}

describe('admission before a large body is read', () => {
  let gateway: TestGateway;
  let address: string;
  const sockets: Socket[] = [];

  beforeAll(async () => {
    gateway = await startTestGateway({ configText: sandboxConfigYaml() });
    address = await gateway.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await gateway?.close();
  });

  /** Sends the headers of a 9 MB body and its first bytes only, and reads the answer given meanwhile. */
  async function sendHead(path: string, key?: string): Promise<{ status: number; body: EnvelopeBody }> {
    const socket = await openSocket(address);
    sockets.push(socket);
    const answer = firstAnswer(socket);
    socket.write(
      [
        `POST ${path} HTTP/1.1`,
        'host: 127.0.0.1',
        ...(key === undefined ? [] : [`x-api-key: ${key}`]),
        'content-type: application/json',
        `content-length: ${9 * 1024 * 1024}`,
        '',
        '{"model":"sandbox-echo","messages":[{"role":"user","content":"',
      ].join('\r\n'),
    );
    const raw = parseRawAnswer(await answer);
    return { status: raw.status, body: JSON.parse(raw.body) as EnvelopeBody };
  }

  const paths = [
    '/api/alpha/v1/chat/completions',
    '/api/beta/v1/messages',
    '/api/gamma/v1beta/models/sandbox-echo:generateContent',
    '/api/v1/text/completions',
  ];

  for (const path of paths)
    it(`refuses a key without credit at ${path} before reading its body`, async () => {
      const { key } = await gateway.createFundedKey({ credits: 0 });
      const { status, body } = await sendHead(path, key);
      expect(status).toBe(403);
      expect(body.errors[0]).toContain('balance');
    });

  it('refuses a key at its spend cap before reading its body', async () => {
    const { key, keyId } = await gateway.createFundedKey({ credits: 1, limits: { total: 0.001 } });
    // The cap spent: the operator lowers it below what the key has already spent.
    const spend = await gateway.request({
      method: 'POST',
      url: '/api/alpha/v1/chat/completions',
      headers: { 'x-api-key': key },
      payload: { model: 'sandbox-echo', messages: [{ role: 'user', content: 'spend a little' }] },
    });
    expect(spend.statusCode).toBe(200);
    await gateway.settled();
    const lowered = await gateway.request({
      method: 'PATCH',
      url: `/api/admin/v1/api-keys/${keyId}/usage-limit`,
      headers: adminHeaders,
      payload: { total: 0.000000001 },
    });
    expect(lowered.statusCode, lowered.body).toBe(200);
    const { status } = await sendHead('/api/alpha/v1/chat/completions', key);
    expect(status).toBe(429);
  });

  // Routes any caller reaches without a credential read no more than they need.
  for (const path of ['/api/v1/nothing', '/api/alpha/v1/nothing', '/'])
    it(`answers POST ${path}, an unknown route, before reading its body`, async () => {
      const { status, body } = await sendHead(path);
      expect(status).toBe(404);
      expect(body.error.code).toBe('GW_ROUTE_NOT_FOUND');
    });

  for (const path of ['/api/v1/auth/login', '/api/v1/auth/signup'])
    it(`refuses at ${path} a body past what an email and a password take, before reading it`, async () => {
      const { status, body } = await sendHead(path);
      expect(status).toBe(413);
      expect(body.errors[0]).toContain('16384 bytes');
    });

  it('reads a large body of a key that may spend, as ever', async () => {
    const { key } = await gateway.createFundedKey({ credits: 1 });
    const content = 'word '.repeat(20_000);
    const response = await gateway.request({
      method: 'POST',
      url: '/api/alpha/v1/chat/completions',
      headers: { 'x-api-key': key },
      payload: { model: 'sandbox-echo', max_tokens: 8, messages: [{ role: 'user', content }] },
    });
    expect(response.statusCode, response.body).toBe(200);
  });
});
