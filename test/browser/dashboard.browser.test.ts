/**
 * The dashboard in a real browser (Debian's Chromium, driven by playwright-core) against a real gateway on
 * 127.0.0.1 with the shipped gateway.yaml: a newcomer signs up, makes a key, calls the sandbox with it, sees
 * the call in the usage history and the balance go down, sees a sandbox image in the media view, caps the key
 * until the next call is refused with 429, reveals it and revokes it (next call 401), and finds each change in
 * Activity. Screenshots of the main
 * pages, wide and at phone width, go to test-output/screenshots/.
 */
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DashboardRig, mustRun, screenshots, startDashboardRig, warnIfSkipped } from '../support/browser.ts';
import { tinyPngBase64 } from '../support/image-jobs.ts';
import { testAdminToken, type TestGateway } from '../support/test-gateway.ts';

warnIfSkipped('dashboard browser test');

describe.skipIf(!mustRun)('dashboard in Chromium', () => {
  let rig: DashboardRig;
  let gateway: TestGateway;
  let base: string;
  let context: BrowserContext;
  let page: Page;
  let rawKey = '';
  let pageErrors: string[] = [];

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
  const complete = (key: string) => rig.complete(key, 'Hello from the browser test');

  beforeAll(async () => {
    rig = await startDashboardRig({ permissions: ['clipboard-read', 'clipboard-write'] });
    ({ gateway, base } = rig);
    ({ context, page, pageErrors } = rig.browser);
  }, 60_000);

  afterAll(async () => rig?.close());

  it('signs a newcomer up, with nothing kept in web storage', async () => {
    await page.goto(`${base}/`);
    await expect.poll(() => page.url()).toBe(`${base}/sign-in`);
    expect(await page.getByText('Your session ended').count()).toBe(0);
    // A first load rings nothing: the heading takes focus only when the user moves to another page.
    await expect.poll(() => page.getByLabel('Email').count()).toBe(1);
    expect(await inPage<string>('document.activeElement?.tagName')).toBe('BODY');
    await shot('sign-in');
    // A refused sign-in's error stays on the sign-in form: the sign-up form opens clean.
    await page.getByLabel('Email').fill('nobody@example.com');
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').count()).toBe(1);
    await page.getByRole('link', { name: 'Create an account' }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).innerText()).toBe('Create an account');
    expect(await page.getByRole('alert').count()).toBe(0);
    expect(await page.getByLabel('Email').inputValue()).toBe('');
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

  it("connects a newcomer: each surface's base URL and a first call in curl and each SDK, with the key just made", async () => {
    const connect = page.getByRole('region', { name: 'Connect' });
    for (const path of ['/api/alpha/v1', '/api/beta', '/api/gamma', '/api/v1'])
      expect(await connect.innerText()).toContain(`${base}${path}`);
    const example = connect.getByTestId('connect-example');
    expect(await example.innerText()).toContain(`Bearer ${rawKey}`);
    for (const [choice, expected] of [
      ['openai SDK', `baseURL: '${base}/api/alpha/v1'`],
      ['@anthropic-ai/sdk', `baseURL: '${base}/api/beta'`],
      ['@google/genai', `baseUrl: '${base}/api/gamma'`],
    ] as const) {
      await connect.getByLabel('Example').selectOption({ label: choice });
      await expect.poll(() => example.innerText()).toContain(expected);
      expect(await example.innerText()).toContain(rawKey);
    }
    await connect.getByLabel('Example').selectOption({ label: 'curl' });
    // The curl example works as it is shown.
    const curl = await example.innerText();
    expect(curl).toContain(`curl -s ${base}/api/alpha/v1/chat/completions`);
    await shot('connect');
    // A page opened afresh has no raw key to show: the examples carry a placeholder.
    await page.reload();
    await expect.poll(() => page.getByTestId('connect-example').innerText()).toContain('$GATEWAY_KEY');
  }, 30_000);

  it('caps a key at creation', async () => {
    await page.getByRole('button', { name: 'Create key' }).click();
    const dialog = page.getByRole('dialog', { name: 'Create an API key' });
    await dialog.getByLabel('Name').fill('capped');
    await dialog.getByLabel('Total cap (USD)').fill('0.5');
    await dialog.getByLabel('Daily cap (USD)').fill('0.25');
    await dialog.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('dialog', { name: 'Your new API key' }).getByRole('button', { name: 'Done' }).click();
    const card = page.getByRole('article', { name: 'capped' });
    await expect.poll(() => card.getByRole('row', { name: /^Total/ }).innerText()).toContain('$0.50');
    expect(await card.getByRole('row', { name: /^Daily/ }).innerText()).toContain('$0.25');
    const listed = (await (await context.request.get(`${base}/api/v1/api-keys`)).json()) as Array<{
      name: string;
      limits: Record<string, number | undefined>;
    }>;
    expect(listed.find((key) => key.name === 'capped')?.limits).toMatchObject({ total: 0.5, daily: 0.25 });
    await card.getByRole('button', { name: 'Revoke' }).click();
    await page.getByRole('dialog', { name: 'Revoke "capped"?' }).getByRole('button', { name: 'Revoke key' }).click();
    await expect.poll(() => page.getByRole('article', { name: 'capped' }).count()).toBe(0);
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
    // The balance is read again on the page change, beside the history: it may land after the history.
    await expect.poll(() => balanceText()).not.toBe(before);
    const after = await balanceText();
    expect(Number(after.replace(/[$,]/g, ''))).toBeLessThan(6);
    expect(Number(after.replace(/[$,]/g, ''))).toBe((await account()).creditBalance);

    await page
      .getByRole('button', { name: /^Details of sandbox-echo/ })
      .first()
      .click();
    const detail = page.getByRole('dialog', { name: 'Usage record' });
    await expect.poll(() => detail.innerText()).toContain('promptTokens');
    expect(await detail.innerText()).toContain('succeeded');
    // What was sent, in the words of the request: the route called and its fields, not the stored shape.
    const sent = detail.getByTestId('request-summary');
    expect(await sent.innerText()).toContain('/api/v1/text/completions');
    expect(await sent.innerText()).toMatch(/messages\s+1/);
    await page.keyboard.press('Escape');
    await expect.poll(() => detail.count()).toBe(0);

    // In a short window the record scrolls inside its dialog, and its Close button stays in view.
    await page.setViewportSize({ width: 1280, height: 420 });
    await page
      .getByRole('button', { name: /^Details of sandbox-echo/ })
      .first()
      .click();
    await expect.poll(() => detail.innerText()).toContain('promptTokens');
    const close = detail.getByRole('button', { name: 'Close', exact: true });
    const box = await close.boundingBox();
    expect(box, 'the Close button is laid out').not.toBeNull();
    expect(box!.y + box!.height).toBeLessThanOrEqual(420);
    expect(box!.y).toBeGreaterThanOrEqual(0);
    await shot('usage-dialog-short-window');
    await close.click();
    await expect.poll(() => detail.count()).toBe(0);
    await page.setViewportSize({ width: 1280, height: 900 });

    await page.getByLabel('Modality').selectOption('image');
    await expect.poll(() => page.getByText('No usage recorded for this filter.').count()).toBe(1);
    await page.getByLabel('Modality').selectOption('');
    await expect.poll(() => page.getByRole('img', { name: /^Spend per UTC day/ }).count()).toBe(1);
    expect(await page.locator('svg.chart rect').count()).toBeGreaterThan(0);
    // A value axis in USD from $0.00 up, date ticks under the bars, and each day's total on hover.
    const valueTicks = await page.locator('svg.chart .value-tick text').allTextContents();
    expect(valueTicks[0]).toBe('$0.00');
    expect(valueTicks.length).toBeGreaterThan(1);
    for (const tick of valueTicks) expect(tick).toMatch(/^\$\d/);
    const dateTicks = await page.locator('svg.chart text.date-tick').allTextContents();
    expect(dateTicks.length).toBeGreaterThan(1);
    expect(dateTicks.length).toBeLessThanOrEqual(6);
    for (const tick of dateTicks) expect(tick).toMatch(/^\d{2}-\d{2}$/);
    const today = new Date().toISOString().slice(0, 10);
    const todayTotal = await page.locator('svg.chart .day-hit title').last().textContent();
    expect(todayTotal).toMatch(new RegExp(`^${today}: \\$`));
    expect(todayTotal).not.toBe(`${today}: $0.00`);
    await page.locator('svg.chart .day').last().hover();
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
    const image = page.getByRole('img', { name: 'Image: a lighthouse at dusk' });
    await expect.poll(() => image.count()).toBe(1);
    // Decoded from the signed link: the preview really shows the archived PNG.
    await expect.poll(() => inPage<number>("document.querySelector('figure img').naturalWidth")).toBeGreaterThan(0);
    const download = page.getByRole('link', { name: 'Download Image' });
    const href = await download.getAttribute('href');
    expect(href).toMatch(/\/api\/v1\/media\/files\/.+signature=/);
    const file = await context.request.get(href!);
    expect(file.status()).toBe(200);
    expect(file.headers()['content-type']).toMatch(/^image\/png/);
    await shot('media');
  }, 30_000);

  it('names the outputs of a layer decomposition by role, and shows spoken text and a real clip length', async () => {
    const jobs = [
      {
        url: '/api/v1/image/generations/async',
        body: {
          model: 'sandbox-image-layers',
          layerDecomposition: true,
          content: [{ type: 'imageBase64', data: tinyPngBase64, mediaType: 'image/png' }],
        },
        poll: '/api/v1/image/generations/async/',
      },
      {
        url: '/api/v1/audio/text-to-speech',
        body: { voiceType: 'zh_female_vv_uranus_bigtts', text: 'Short and sweet.' },
        poll: '/api/v1/audio/generations/',
      },
    ];
    for (const job of jobs) {
      const made = await fetch(`${base}${job.url}`, {
        method: 'POST',
        headers: { 'x-api-key': rawKey, 'content-type': 'application/json' },
        body: JSON.stringify(job.body),
      });
      expect(made.status, await made.clone().text()).toBeLessThan(300);
      const { generationId } = (await made.json()) as { generationId: string };
      await expect
        .poll(
          async () => {
            const polled = await fetch(`${base}${job.poll}${generationId}`, { headers: { 'x-api-key': rawKey } });
            return ((await polled.json()) as { status: string }).status;
          },
          { timeout: 20_000 },
        )
        .toBe('succeeded');
    }

    await go('API keys', 'API keys');
    await go('Media', 'Media');
    const outputs = page.getByTestId('media-output');
    await expect.poll(() => page.getByText('Base image', { exact: true }).count()).toBe(1);
    const layer = outputs.filter({ hasText: /^Layer 1/ });
    expect(await layer.count()).toBe(1);
    // A layer says where it sits on the base: its box, [left, top, right, bottom].
    expect(await layer.innerText()).toMatch(/at \(\d+, \d+, \d+, \d+\)/);
    expect(await page.getByRole('link', { name: 'Download Base image' }).count()).toBe(1);

    const audio = page.getByRole('article', { name: /^audio by/ });
    expect(await audio.innerText()).toContain('Text: Short and sweet.');
    // The length is the file's own, with its fraction: a clip under a second does not read "0:00".
    await expect.poll(() => audio.locator('.clip-length').innerText()).toMatch(/^\d+(\.\d+)? s$/);
    await shot('media-roles');
  }, 60_000);

  it('lists the catalog with prices and capabilities', async () => {
    await go('Catalog', 'Model catalog');
    const echo = page.getByRole('article', { name: 'sandbox-echo' });
    await expect.poll(() => echo.innerText()).toContain('per million input tokens');
    await page.getByLabel('Search').fill('sandbox-image');
    await expect.poll(() => page.getByRole('article').count()).toBeGreaterThan(0);
    expect(await page.getByRole('article', { name: 'sandbox-echo' }).count()).toBe(0);
    await page.getByLabel('Search').fill('seed-tts-2.0');
    // A speech model's parameters are checked by its audio route, and the catalog says how.
    const speech = page.getByRole('article', { name: 'seed-tts-2.0' });
    await expect.poll(() => speech.innerText()).toContain('Parameters checked by its audio route');
    expect(await speech.innerText()).toContain('speechRate: whole number -50 to 100');
    expect(await speech.innerText()).not.toContain('No parameter constraints');
    await shot('catalog-speech');
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
    // A cap typed below what was spent is flagged before it is saved.
    await caps.getByLabel('Daily cap (USD)').fill(String(spent / 2));
    await expect
      .poll(() =>
        caps
          .getByRole('status')
          .filter({ hasText: /^Below the/ })
          .count(),
      )
      .toBe(1);
    await shot('caps-below-spent');
    await caps.getByLabel('Daily cap (USD)').fill(String(spent));
    expect(
      await caps
        .getByRole('status')
        .filter({ hasText: /^Below the/ })
        .count(),
    ).toBe(0);
    await caps.getByRole('button', { name: 'Save caps' }).click();
    await expect.poll(() => caps.count()).toBe(0);
    // A cap reached is said in words and drawn full in the warning colour, not as a calm green meter.
    await expect.poll(() => card.getByTestId('cap-reached-daily').innerText()).toBe('cap reached');
    expect(await card.locator('meter.over').count()).toBe(1);
    await shot('cap-reached');
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
      // On failure, the elements that reach past the window say what to fix.
      const overflowing = await inPage<string[]>(
        "[...document.querySelectorAll('main *')].filter((element) => element.getBoundingClientRect().right > 361)" +
          ".slice(0, 5).map((element) => element.tagName + '.' + element.className + ' ' + element.getBoundingClientRect().right)",
      );
      expect(
        await inPage<number>('document.documentElement.scrollWidth'),
        `${section}: ${overflowing.join(', ')}`,
      ).toBeLessThanOrEqual(360);
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

  it('lists the changes made in Activity: who, what moved and from where, filtered by kind', async () => {
    await go('Activity', 'Activity');
    const table = page.getByRole('table', { name: 'Changes, newest first' });
    await expect.poll(() => table.innerText()).toContain('Key revoked');
    const text = await table.innerText();
    for (const expected of ['Signed up', 'Key created', 'Key "old laptop"', 'name: laptop → old laptop', 'You'])
      expect(text).toContain(expected);
    await page.getByLabel('Show').selectOption({ label: 'Key revoked' });
    await expect.poll(() => table.getByRole('row').count()).toBe(3);
    for (const row of await table.getByRole('row').all()) expect(await row.innerText()).toMatch(/Change|Key revoked/);
    await shot('activity');
  }, 30_000);

  it('signs out, and the session cookie no longer opens the account API', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await expect.poll(() => page.url()).toBe(`${base}/sign-in`);
    expect((await context.request.get(`${base}/api/v1/account`)).status()).toBe(401);
    expect(pageErrors).toEqual([]);
  }, 30_000);
});
