/**
 * The operator console's catalog page in a real browser (Chromium) against a real gateway: an operator edits a
 * model's price (a bad one shows the gateway's 400 message and changes nothing), sees the new version charged
 * now in the price history and on the next usage record, disables the model (clients are refused it) and
 * enables it again, changes an entry as JSON and reverts it to gateway.yaml's, at desktop and phone width.
 * Screenshots go to test-output/screenshots/.
 */
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type DashboardRig,
  mustRun,
  screenshots,
  signIn,
  startDashboardRig,
  warnIfSkipped,
} from '../support/browser.ts';
import { adminHeaders, testPassword } from '../support/http-helpers.ts';
import type { TestGateway } from '../support/test-gateway.ts';

warnIfSkipped('operator catalog browser test');

describe.skipIf(!mustRun)('operator catalog page in Chromium', () => {
  let rig: DashboardRig;
  let gateway: TestGateway;
  let base: string;
  let page: Page;
  let customer: { accountId: string; key: string };

  const shot = (name: string) =>
    page.screenshot({ path: path.join(screenshots, `operator-catalog-${name}.png`), fullPage: true });
  const heading = () => page.getByRole('heading', { level: 1 }).innerText();
  const row = () => page.locator('tr[data-model="sandbox-echo"]');
  const complete = () => rig.complete(customer.key, 'Hello catalog');
  const lastRecord = async () => {
    await gateway.settled();
    const answer = await fetch(`${base}/api/admin/v1/accounts/${customer.accountId}/generations`, {
      headers: adminHeaders,
    });
    const page = (await answer.json()) as { results: Array<{ priceVersion?: string }> };
    return page.results[0];
  };

  beforeAll(async () => {
    rig = await startDashboardRig();
    ({ gateway, base } = rig);
    page = rig.browser.page;
    const services = gateway.gateway.core.services;
    const operator = await services.accounts.createAccount({
      email: 'catalog-ops@example.com',
      password: testPassword,
    });
    await services.accounts.setRole(operator.id, 'operator');
    const funded = await gateway.createFundedKey({ credits: 5 });
    customer = { accountId: funded.accountId, key: funded.key };
  }, 60_000);

  afterAll(async () => rig?.close());

  it('signs an operator in to the catalog: models with source, switch, prices and price version, focus on the heading', async () => {
    await signIn(page, base, 'catalog-ops@example.com');
    await page.getByRole('navigation', { name: 'Operator' }).getByRole('link', { name: 'Catalog' }).click();
    await expect.poll(heading).toBe('Catalog and prices');
    await expect.poll(() => page.evaluate('document.activeElement?.tagName')).toBe('H1');
    await expect.poll(() => row().count()).toBe(1);
    const text = await row().innerText();
    expect(text).toContain('gateway.yaml');
    expect(text).toContain('Active');
    expect(text).toMatch(/price_/);
    await shot('table');
  }, 30_000);

  it('edits a price: a bad value shows the 400 message, a good one is charged next under the new version', async () => {
    const before = (await row().innerText()).match(/price_\w+/)?.[0];
    expect(before).toBeDefined();
    await page.getByRole('button', { name: 'Edit prices of sandbox-echo' }).click();
    const dialog = page.getByRole('dialog', { name: 'Prices of sandbox-echo' });
    const input = dialog.getByLabel('Input, per million tokens (USD)');
    // Focus goes to the first field of the dialog.
    await expect.poll(() => page.evaluate('document.activeElement?.getAttribute("name")')).toBe('inputPerMTok');
    await input.fill('-1');
    await dialog.getByRole('button', { name: 'Save prices' }).click();
    await expect.poll(() => dialog.getByRole('alert').innerText()).toContain('inputPerMTok');
    await shot('bad-price');
    expect(await row().innerText()).toContain(before!);

    await input.fill('1000');
    await dialog.getByRole('button', { name: 'Save prices' }).click();
    await expect.poll(() => dialog.count()).toBe(0);
    await expect.poll(() => page.getByTestId('catalog-notice').innerText()).toContain('sandbox-echo saved');
    await expect.poll(async () => (await row().innerText()).includes(before!)).toBe(false);
    const after = (await row().innerText()).match(/price_\w+/)?.[0];
    expect(await row().innerText()).toContain('$1,000.00');

    expect((await complete()).status).toBe(200);
    expect((await lastRecord())?.priceVersion).toBe(after);

    await page.getByRole('button', { name: 'Price history of sandbox-echo' }).click();
    const history = page.getByRole('dialog', { name: 'Price history of sandbox-echo' });
    const rows = history.getByRole('table').getByRole('row');
    await expect.poll(() => rows.count()).toBe(3);
    const newest = await rows.nth(1).innerText();
    expect(newest).toContain(after!);
    expect(newest).toContain('charged now');
    expect(newest).toContain('runtime');
    expect(await rows.nth(2).innerText()).toContain('gateway.yaml');
    await shot('history');
    await history.getByRole('button', { name: 'Close', exact: true }).click();
    await expect.poll(() => history.count()).toBe(0);
  }, 30_000);

  it('disables the model (clients are refused it) and enables it again', async () => {
    await page.getByRole('button', { name: 'Disable sandbox-echo' }).click();
    await expect.poll(() => page.getByRole('button', { name: 'Enable sandbox-echo' }).count()).toBe(1);
    expect(await row().innerText()).toContain('Disabled');
    expect((await complete()).status).toBe(400);
    await shot('disabled');
    await page.getByRole('button', { name: 'Enable sandbox-echo' }).click();
    await expect.poll(() => page.getByRole('button', { name: 'Disable sandbox-echo' }).count()).toBe(1);
    expect((await complete()).status).toBe(200);
  }, 30_000);

  it('changes an entry as JSON, showing what the gateway refuses', async () => {
    await page.getByRole('button', { name: 'Edit entry of sandbox-echo as JSON' }).click();
    const dialog = page.getByRole('dialog', { name: 'Entry of sandbox-echo' });
    const field = dialog.getByLabel(/Model entry/);
    const entry = JSON.parse(await field.inputValue()) as Record<string, unknown>;
    await field.fill(JSON.stringify({ ...entry, id: 'another-id' }));
    await dialog.getByRole('button', { name: 'Save entry' }).click();
    await expect.poll(() => dialog.getByRole('alert').count()).toBe(1);
    await field.fill(JSON.stringify({ ...entry, name: 'Echo, renamed' }, null, 2));
    await shot('entry-json');
    await dialog.getByRole('button', { name: 'Save entry' }).click();
    await expect.poll(() => dialog.count()).toBe(0);
    await expect.poll(() => row().innerText()).toContain('Echo, renamed');
    expect(await row().innerText()).toContain('runtime');
  }, 30_000);

  it("reverts the runtime changes after a confirmation: gateway.yaml's entry serves again", async () => {
    await page.getByRole('button', { name: 'Delete runtime changes of sandbox-echo' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete the runtime changes of sandbox-echo' });
    expect(await dialog.innerText()).toContain("gateway.yaml's entry serves again");
    await dialog.getByRole('button', { name: 'Delete runtime changes' }).click();
    await expect.poll(() => dialog.count()).toBe(0);
    await expect.poll(() => row().innerText()).not.toContain('Echo, renamed');
    expect(await row().innerText()).toContain('gateway.yaml');
    expect(await page.getByRole('button', { name: 'Delete runtime changes of sandbox-echo' }).count()).toBe(0);
  }, 30_000);

  it('is usable at phone width (360 px) without sideways scrolling, and reported no page error', async () => {
    await page.setViewportSize({ width: 360, height: 780 });
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(360);
    await shot('phone');
    await page.setViewportSize({ width: 1280, height: 900 });
    expect(rig.browser.pageErrors).toEqual([]);
  }, 30_000);
});
