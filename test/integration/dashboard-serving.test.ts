/**
 * How the gateway serves the dashboard's built files: `/` and client-side routes answer index.html (no-cache),
 * hashed assets are cached for a year, /api/ keeps its JSON errors, and a gateway without a build still starts
 * and says the dashboard is not built. A stand-in build is written here, so these tests do not need Vite.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectEnvelope, keyHeaders } from '../support/http-helpers.ts';
import { startTestGateway, type TestGateway } from '../support/test-gateway.ts';

const pageAccept = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
const indexHtml =
  '<!doctype html><title>Model gateway</title><script type="module" src="/assets/index-Ab12Cd34.js"></script>';
const script = 'console.log("dashboard")';

describe('dashboard files', () => {
  let gateway: TestGateway;
  let buildDir: string;

  beforeAll(async () => {
    buildDir = mkdtempSync(path.join(tmpdir(), 'gw-dashboard-'));
    mkdirSync(path.join(buildDir, 'assets'));
    writeFileSync(path.join(buildDir, 'index.html'), indexHtml);
    writeFileSync(path.join(buildDir, 'assets', 'index-Ab12Cd34.js'), script);
    gateway = await startTestGateway({ dashboardDir: buildDir });
  });
  afterAll(async () => {
    await gateway?.close();
    rmSync(buildDir, { recursive: true, force: true });
  });

  it.each(['/', '/index.html'])(
    '%s answers index.html, never cached without revalidation, with a strict content policy',
    async (url) => {
      const response = await gateway.request({ method: 'GET', url, headers: { accept: pageAccept } });
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-type']).toMatch(/^text\/html/);
      expect(response.body).toBe(indexHtml);
      expect(response.headers['cache-control']).toBe('no-cache');
      expect(response.headers['content-security-policy']).toContain("script-src 'self'");
      expect(response.headers['x-content-type-options']).toBe('nosniff');
      expect(response.headers['referrer-policy']).toBe('no-referrer');
    },
  );

  it('/ answers the page to any client (curl sends */*)', async () => {
    const response = await gateway.request({ method: 'GET', url: '/', headers: { accept: '*/*' } });
    expect(response.statusCode).toBe(200);
    expect(response.body).toBe(indexHtml);
  });

  it.each(['/keys', '/usage', '/media/', '/catalog?search=echo', '/some/deep/client/route'])(
    'the client route %s answers index.html to a browser',
    async (url) => {
      const response = await gateway.request({ method: 'GET', url, headers: { accept: pageAccept } });
      expect(response.statusCode).toBe(200);
      expect(response.body).toBe(indexHtml);
      expect(response.headers['cache-control']).toBe('no-cache');
    },
  );

  it('HEAD of a client route answers like GET without a body', async () => {
    const response = await gateway.request({ method: 'HEAD', url: '/usage', headers: { accept: pageAccept } });
    expect(response.statusCode).toBe(200);
    expect(response.body).toBe('');
  });

  it('hashed assets are served with a year-long immutable cache', async () => {
    const response = await gateway.request({ method: 'GET', url: '/assets/index-Ab12Cd34.js' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/javascript/);
    expect(response.body).toBe(script);
    expect(response.headers['cache-control']).toBe('public, max-age=31536000, immutable');
  });

  it('an unknown asset, or a page asked for as JSON, answers the 404 envelope', async () => {
    expectEnvelope(await gateway.request({ method: 'GET', url: '/assets/missing.js' }), {
      status: 404,
      code: 'GW_ROUTE_NOT_FOUND',
      path: '/assets/missing.js',
    });
    expectEnvelope(await gateway.request({ method: 'GET', url: '/keys', headers: { accept: 'application/json' } }), {
      status: 404,
      code: 'GW_ROUTE_NOT_FOUND',
      path: '/keys',
    });
    expectEnvelope(await gateway.request({ method: 'POST', url: '/keys', headers: { accept: pageAccept } }), {
      status: 404,
      code: 'GW_ROUTE_NOT_FOUND',
      path: '/keys',
    });
  });

  it('traversal out of the build is never served', async () => {
    for (const url of [
      '/../package.json',
      '/assets/../../package.json',
      '/assets/%2e%2e/%2e%2e/package.json',
      '/%2e%2e%2fpackage.json',
    ]) {
      const response = await gateway.request({ method: 'GET', url, headers: { accept: pageAccept } });
      expect(response.body, url).not.toContain('"name": "model-gateway"');
      expect(response.statusCode, url).toBeLessThan(500);
    }
  });

  it.each([
    '/api/v1/nothing-here',
    '/api',
    '/api/',
    '/API/V1/NOPE',
    '/%61pi/v1/nope',
    '/metrics/x',
    '/openapi.json/x',
    '/docs/nothing',
    '/readyz/x',
  ])('%s stays an API path: a browser asking for it gets the JSON envelope', async (url) => {
    const response = await gateway.request({ method: 'GET', url, headers: { accept: pageAccept } });
    expectEnvelope(response, { status: 404, code: 'GW_ROUTE_NOT_FOUND', path: url });
  });

  it('a path with a malformed escape answers the 400 envelope, not the page', async () => {
    expectEnvelope(await gateway.request({ method: 'GET', url: '/%E0%A4%A', headers: { accept: pageAccept } }), {
      status: 400,
      code: 'GW_VALIDATION',
      path: '/%E0%A4%A',
    });
  });

  it('API routes answer as before', async () => {
    const { key } = await gateway.createFundedKey({ credits: 1 });
    const response = await gateway.request({
      method: 'GET',
      url: '/api/compat/v1/balance',
      headers: { ...keyHeaders(key), accept: pageAccept },
    });
    expect(response.json()).toEqual({ creditBalance: 1 });
  });
});

describe('a gateway whose dashboard is not built', () => {
  let gateway: TestGateway;
  let emptyDir: string;

  beforeAll(async () => {
    emptyDir = mkdtempSync(path.join(tmpdir(), 'gw-no-dashboard-'));
    gateway = await startTestGateway({ dashboardDir: emptyDir });
  });
  afterAll(async () => {
    await gateway?.close();
    rmSync(emptyDir, { recursive: true, force: true });
  });

  it.each([
    ['/', '*/*'],
    ['/', pageAccept],
    ['/usage', pageAccept],
  ])('%s (accept %s) answers a 404 envelope saying so', async (url, accept) => {
    const body = expectEnvelope(await gateway.request({ method: 'GET', url, headers: { accept } }), {
      status: 404,
      code: 'GW_NOT_FOUND',
      path: url,
    });
    expect(body.errors[0]).toContain('the dashboard is not built');
    expect(body.errors[0]).toContain('npm run build');
  });

  it('still starts and serves the API', async () => {
    const { key } = await gateway.createFundedKey({ credits: 2 });
    const response = await gateway.request({ method: 'GET', url: '/api/compat/v1/balance', headers: keyHeaders(key) });
    expect(response.json()).toEqual({ creditBalance: 2 });
    expectEnvelope(await gateway.request({ method: 'GET', url: '/usage', headers: { accept: 'application/json' } }), {
      status: 404,
      code: 'GW_ROUTE_NOT_FOUND',
      path: '/usage',
    });
  });
});
