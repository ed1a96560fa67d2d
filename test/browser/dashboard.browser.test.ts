/**
 * The dashboard in a real browser (Debian's Chromium, driven by playwright-core) against a real gateway on
 * 127.0.0.1 with the shipped gateway.yaml: a newcomer signs up, makes a key, calls the sandbox with it, sees
 * the call in the usage history and the balance go down, sees a sandbox image in the media view, caps the key
 * until the next call is refused with 429, reveals it and revokes it (next call 401). Screenshots of the main
 * pages, wide and at phone width, go to test-output/screenshots/.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtDashboardDir } from '../../src/http/dashboard.ts';
import { freePort } from '../support/free-port.ts';
import { startTestGateway, testAdminToken, type TestGateway } from '../support/test-gateway.ts';

const chromiumPath = '/usr/bin/chromium';
const hasChromium = existsSync(chromiumPath);
/** In CI a missing browser is a failure, never a silent skip. */
const mustRun = hasChromium || Boolean(process.env.CI);
const screenshots = path.resolve(import.meta.dirname, '../../test-output/screenshots');
/** Without the background-networking switches Chromium keeps dialling Google and stalls on the closed network. */
const launchFlags = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

if (!mustRun) {
  console.warn(
    `dashboard browser test skipped: ${chromiumPath} is missing (apt-get install -y chromium); with CI set this is a failure`,
  );
}

describe.skipIf(!mustRun)('dashboard in Chromium', () => {
  let gateway: TestGateway;
  let base: string;
  let context: BrowserContext;
  let page: Page;
  let userDataDir: string;
  let rawKey = '';
  const pageErrors: string[] = [];

  /** Page code is written as text: this file is compiled with Node's types, not the DOM's. */
  const inPage = async <T>(expression: string): Promise<T> => (await page.evaluate(expression)) as T;
  const shot = (name: string) => page.screenshot({ path: path.join(screenshots, `${name}.png`), fullPage: true });
  const account = async () =>
    (await context.request.get(`${base}/api/v1/account`)).json() as Promise<{ id: string; creditBalance: number }>;
  const balanceText = () => page.getByTestId('balance').innerText();
  const go = async (section: string, heading: string) => {
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: section }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).innerText()).toBe(heading);
  };
  const complete = (key: string) =>
    fetch(`${base}/api/v1/text/completions`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'sandbox-echo',
        messages: [{ role: 'user', content: 'Hello from the browser test' }],
      }),
    });

  beforeAll(async () => {
    if (!hasChromium)
      throw new Error(
        `${chromiumPath} is missing: install it (apt-get install -y chromium); CI must run the browser test`,
      );
    if (!existsSync(path.join(builtDashboardDir, 'index.html')))
      throw new Error(`${builtDashboardDir} is not built: run "npm run build" (npm test does)`);
    mkdirSync(screenshots, { recursive: true });
    // Download links are made on the configured HOST:PORT, the address the gateway then listens on.
    const port = await freePort();
    gateway = await startTestGateway({ env: { PORT: String(port) } });
    await gateway.app.listen({ host: '127.0.0.1', port });
    base = `http://127.0.0.1:${port}`;
    userDataDir = mkdtempSync(path.join(tmpdir(), 'gw-chromium-'));
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: chromiumPath,
      headless: true,
      args: launchFlags,
      viewport: { width: 1280, height: 900 },
      permissions: ['clipboard-read', 'clipboard-write'],
    });
    context.setDefaultTimeout(10_000);
    page = context.pages()[0] ?? (await context.newPage());
    page.on('pageerror', (error) => pageErrors.push(error.message));
    page.on('console', (message) => {
      // A refused Content-Security-Policy, a failed asset or a script error all surface here.
      if (message.type() === 'error' && !message.text().includes('status of 40')) pageErrors.push(message.text());
    });
  }, 60_000);

  afterAll(async () => {
    await context?.close();
    if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
    await gateway?.close();
  });

  it('signs a newcomer up, with nothing kept in web storage', async () => {
    await page.goto(`${base}/`);
    await expect.poll(() => page.url()).toBe(`${base}/sign-in`);
    expect(await page.getByText('Your session ended').count()).toBe(0);
    await page.getByRole('link', { name: 'Create an account' }).click();
    await page.getByLabel('Email').fill('browser@example.com');
    await page.getByLabel('Password').fill('a long enough password');
    await page.getByRole('button', { name: 'Create account' }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).innerText()).toBe('API keys');
    expect(page.url()).toBe(`${base}/keys`);
    expect(await inPage<number>('localStorage.length + sessionStorage.length')).toBe(0);
    // The session cookie is HttpOnly: the page sees only the CSRF token it echoes.
    const visibleCookies = await inPage<string>('document.cookie');
    expect(visibleCookies).toMatch(/gw_csrf=/);
    expect(visibleCookies).not.toMatch(/gw_session/);
    const credits = await context.request.post(`${base}/api/admin/v1/accounts/${(await account()).id}/credits`, {
      headers: { authorization: `Bearer ${testAdminToken}` },
      data: { amount: 5, note: 'browser test' },
    });
    expect(credits.status()).toBe(200);
  }, 30_000);

  it('creates a key, shows the raw key once with a copy button, and gives focus back', async () => {
    await page.reload();
    const opener = page.getByRole('button', { name: 'Create key' });
    await opener.click();
    const dialog = page.getByRole('dialog', { name: 'Create an API key' });
    await expect.poll(() => inPage<string>('document.activeElement?.tagName')).toBe('INPUT');
    await page.keyboard.press('Escape');
    await expect.poll(() => dialog.count()).toBe(0);
    await expect.poll(() => inPage<string>('document.activeElement?.textContent')).toBe('Create key');

    await opener.click();
    await dialog.getByLabel('Name').fill('laptop');
    await page.keyboard.press('Enter');
    const created = page.getByRole('dialog', { name: 'Your new API key' });
    rawKey = await created.getByLabel('New API key').inputValue();
    expect(rawKey).toMatch(/^gwk_[A-Za-z0-9_-]{43}$/);
    await created.getByRole('button', { name: 'Copy' }).click();
    await expect.poll(() => created.getByRole('status').innerText()).toMatch(/Copied|select the text/);
    await created.getByRole('button', { name: 'Done' }).click();
    const card = page.getByRole('article', { name: 'laptop' });
    await expect.poll(() => card.innerText()).toContain('Active');
    await shot('keys');
  }, 30_000);

  it('shows a sandbox call made with the key in the history, and the balance going down', async () => {
    const before = await balanceText();
    expect(before).toBe('$6.00');
    const answer = await complete(rawKey);
    expect(answer.status).toBe(200);
    expect(await answer.text()).toContain('[DONE]');
    await gateway.settled();

    await go('Usage', 'Usage');
    const history = page.getByRole('table', { name: 'Usage records, newest first' });
    await expect.poll(() => history.innerText()).toContain('sandbox-echo');
    // The key's name replaces its id once the key list, fetched beside the history, is in.
    await expect.poll(() => history.innerText()).toContain('laptop');
    const after = await balanceText();
    expect(after).not.toBe(before);
    expect(Number(after.replace(/[$,]/g, ''))).toBeLessThan(6);
    expect(Number(after.replace(/[$,]/g, ''))).toBe((await account()).creditBalance);

    await page
      .getByRole('button', { name: /^Details of sandbox-echo/ })
      .first()
      .click();
    const detail = page.getByRole('dialog', { name: 'Usage record' });
    await expect.poll(() => detail.innerText()).toContain('promptTokens');
    expect(await detail.innerText()).toContain('succeeded');
    await page.keyboard.press('Escape');
    await expect.poll(() => detail.count()).toBe(0);

    await page.getByLabel('Modality').selectOption('image');
    await expect.poll(() => page.getByText('No usage recorded for this filter.').count()).toBe(1);
    await page.getByLabel('Modality').selectOption('');
    await expect.poll(() => page.getByRole('img', { name: /^Spend per UTC day/ }).count()).toBe(1);
    expect(await page.locator('svg.chart rect').count()).toBeGreaterThan(0);
    await shot('usage');
  }, 30_000);

  it('previews and downloads a sandbox image made with the key in the media view', async () => {
    const imageModel = gateway.gateway.core.services.catalog
      .list({ outputModalities: ['image'] })
      .find((model) => model.rows[0]?.protocol === 'sandbox' && model.rows[0].upstreamModel === 'image');
    expect(imageModel, 'gateway.yaml serves a sandbox image model').toBeDefined();
    const made = await fetch(`${base}/api/v1/image/generations`, {
      method: 'POST',
      headers: { 'x-api-key': rawKey, 'content-type': 'application/json' },
      body: JSON.stringify({ model: imageModel!.modelId, content: [{ type: 'text', text: 'a lighthouse at dusk' }] }),
    });
    expect(made.status, await made.clone().text()).toBe(200);

    await go('Media', 'Media');
    const image = page.getByRole('img', { name: 'Generated image: a lighthouse at dusk' });
    await expect.poll(() => image.count()).toBe(1);
    // Decoded from the signed link: the preview really shows the archived PNG.
    await expect.poll(() => inPage<number>("document.querySelector('figure img').naturalWidth")).toBeGreaterThan(0);
    const download = page.getByRole('link', { name: /^Download image/ });
    const href = await download.getAttribute('href');
    expect(href).toMatch(/\/api\/v1\/media\/files\/.+signature=/);
    const file = await context.request.get(href!);
    expect(file.status()).toBe(200);
    expect(file.headers()['content-type']).toMatch(/^image\/png/);
    await shot('media');
  }, 30_000);

  it('lists the catalog with prices and capabilities', async () => {
    await go('Catalog', 'Model catalog');
    const echo = page.getByRole('article', { name: 'sandbox-echo' });
    await expect.poll(() => echo.innerText()).toContain('per million input tokens');
    await page.getByLabel('Search').fill('sandbox-image');
    await expect.poll(() => page.getByRole('article').count()).toBeGreaterThan(0);
    expect(await page.getByRole('article', { name: 'sandbox-echo' }).count()).toBe(0);
    await page.getByLabel('Search').fill('');
    await shot('catalog');
  }, 30_000);

  it('sets a rate limit of one request per minute: the second call is refused with 429; removing it lifts the refusal', async () => {
    await go('API keys', 'API keys');
    const card = page.getByRole('article', { name: 'laptop' });
    await card.getByRole('button', { name: 'Rate limits' }).click();
    const limits = page.getByRole('dialog', { name: 'Rate limits of "laptop"' });
    await limits.getByLabel('Requests per minute').fill('1');
    await limits.getByRole('button', { name: 'Save limits' }).click();
    await expect.poll(() => limits.count()).toBe(0);
    await expect.poll(() => card.getByText(/^Rate limits:/).innerText()).toContain('requests per minute 1');

    expect((await complete(rawKey)).status).toBe(200);
    const refused = await complete(rawKey);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(((await refused.json()) as { errors: string[] }).errors[0]).toMatch(/requests per minute/);

    await card.getByRole('button', { name: 'Rate limits' }).click();
    await limits.getByLabel('Concurrent requests').fill('0');
    await limits.getByRole('button', { name: 'Save limits' }).click();
    // The browser's own check or the dialog's: either way it stays open and says why.
    await expect
      .poll(async () => (await limits.getByRole('alert').count()) + (await limits.locator('input:invalid').count()))
      .toBeGreaterThan(0);
    await limits.getByLabel('Concurrent requests').fill('');
    await limits.getByLabel('Requests per minute').fill('');
    await limits.getByRole('button', { name: 'Save limits' }).click();
    await expect.poll(() => limits.count()).toBe(0);
    await expect.poll(() => card.getByText(/^Rate limits:/).innerText()).toContain("the account's");
    expect((await complete(rawKey)).status).toBe(200);

    // The account's limits are the operator's: shown read only, and a key's own higher limit cannot lift them.
    const admin = { authorization: `Bearer ${testAdminToken}` };
    const accountLimits = `${base}/api/admin/v1/accounts/${(await account()).id}/rate-limits`;
    expect(
      (await context.request.patch(accountLimits, { headers: admin, data: { requestsPerMinute: 2 } })).status(),
    ).toBe(200);
    await page.reload();
    await expect
      .poll(() => page.getByText(/^Account rate limits, set by the operator:/).innerText())
      .toContain('requests per minute 2');
    await card.getByRole('button', { name: 'Rate limits' }).click();
    await expect.poll(() => limits.innerText()).toContain('account: at most 2');
    await limits.getByLabel('Requests per minute').fill('1000');
    await limits.getByRole('button', { name: 'Save limits' }).click();
    await expect.poll(() => limits.count()).toBe(0);
    await expect.poll(() => card.getByText(/^Rate limits:/).innerText()).toContain('requests per minute 1000');
    // At most two calls pass within the minute (fewer when the minute's earlier calls still count).
    const statuses: number[] = [];
    let lastRefusal = '';
    for (let call = 0; call < 3 && !statuses.includes(429); call++) {
      const answer = await complete(rawKey);
      statuses.push(answer.status);
      if (answer.status === 429) lastRefusal = ((await answer.json()) as { errors: string[] }).errors[0] ?? '';
    }
    expect(statuses.filter((status) => status === 200).length).toBeLessThanOrEqual(2);
    expect(lastRefusal).toContain('limit of 2 requests per minute');
    expect(
      (await context.request.patch(accountLimits, { headers: admin, data: { requestsPerMinute: null } })).status(),
    ).toBe(200);
    expect((await complete(rawKey)).status).toBe(200);
  }, 30_000);

  it('sets a daily cap at what the key has spent, and the next call is refused with 429', async () => {
    await go('API keys', 'API keys');
    const card = page.getByRole('article', { name: 'laptop' });
    const spent = (
      (await (await context.request.get(`${base}/api/v1/api-keys`)).json()) as Array<{
        spend: { daily: { spent: number } };
      }>
    )[0]!.spend.daily.spent;
    expect(spent).toBeGreaterThan(0);
    await card.getByRole('button', { name: 'Spend caps' }).click();
    const caps = page.getByRole('dialog', { name: 'Spend caps of "laptop"' });
    await caps.getByLabel('Daily cap (USD)').fill(String(spent));
    await caps.getByRole('button', { name: 'Save caps' }).click();
    await expect.poll(() => caps.count()).toBe(0);
    const remaining = card
      .getByRole('row', { name: /^Daily/ })
      .getByRole('cell')
      .last();
    await expect.poll(() => remaining.innerText()).toBe('$0.00');

    const refused = await complete(rawKey);
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { errors: string[] }).errors[0]).toMatch(/daily/);

    await card.getByRole('button', { name: 'Spend caps' }).click();
    await caps.getByLabel('Daily cap (USD)').fill('-1');
    await caps.getByRole('button', { name: 'Save caps' }).click();
    // The browser's own check or the gateway's 400: either way the dialog stays open and says why.
    await expect
      .poll(async () => (await caps.getByRole('alert').count()) + (await caps.locator('input:invalid').count()))
      .toBeGreaterThan(0);
    await caps.getByRole('button', { name: 'Cancel' }).click();
  }, 30_000);

  it('is usable at phone width (360 px): no sideways scrolling', async () => {
    await page.setViewportSize({ width: 360, height: 780 });
    for (const [section, heading, name] of [
      ['API keys', 'API keys', 'keys-phone'],
      ['Usage', 'Usage', 'usage-phone'],
      ['Media', 'Media', 'media-phone'],
    ] as const) {
      await go(section, heading);
      await expect.poll(() => page.getByText('Loading…').count()).toBe(0);
      expect(await inPage<number>('document.documentElement.scrollWidth'), section).toBeLessThanOrEqual(360);
      await shot(name);
    }
    await page.setViewportSize({ width: 1280, height: 900 });
  }, 30_000);

  it('reveals the key again, disables and enables it, then revokes it after a confirmation (next call 401)', async () => {
    await go('API keys', 'API keys');
    const card = page.getByRole('article', { name: 'laptop' });
    await card.getByRole('button', { name: 'Reveal' }).click();
    const reveal = page.getByRole('dialog', { name: 'Key "laptop"' });
    await expect.poll(() => reveal.getByLabel('API key').inputValue()).toBe(rawKey);
    await reveal.getByRole('button', { name: 'Close', exact: true }).click();

    await card.getByRole('button', { name: 'Disable' }).click();
    await expect.poll(() => card.innerText()).toContain('Disabled');
    expect((await complete(rawKey)).status).toBe(401);
    await card.getByRole('button', { name: 'Enable' }).click();
    await expect.poll(() => card.innerText()).toContain('Active');

    await card.getByRole('button', { name: 'Rename' }).click();
    const rename = page.getByRole('dialog', { name: 'Rename "laptop"' });
    await rename.getByLabel('New name').fill('old laptop');
    await rename.getByRole('button', { name: 'Save' }).click();
    const renamed = page.getByRole('article', { name: 'old laptop' });
    await expect.poll(() => renamed.count()).toBe(1);

    await renamed.getByRole('button', { name: 'Revoke' }).click();
    const confirm = page.getByRole('dialog', { name: 'Revoke "old laptop"?' });
    // The safe choice has the focus, so Enter does not revoke by accident.
    await expect.poll(() => inPage<string>('document.activeElement?.textContent')).toBe('Cancel');
    await confirm.getByRole('button', { name: 'Revoke key' }).click();
    await expect.poll(() => page.getByRole('article').count()).toBe(0);
    const afterRevoke = await complete(rawKey);
    expect(afterRevoke.status).toBe(401);
  }, 30_000);

  it('signs out, and the session cookie no longer opens the account API', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await expect.poll(() => page.url()).toBe(`${base}/sign-in`);
    expect((await context.request.get(`${base}/api/v1/account`)).status()).toBe(401);
    expect(pageErrors).toEqual([]);
  }, 30_000);
});
