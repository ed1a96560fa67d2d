/**
 * The operator console in a real browser (Chromium) against a real gateway: a plain account sees no Operator
 * section and cannot open its pages; an operator account searches accounts, grants and removes credit with a
 * reason (a removal past the balance is refused), sets the password of an account made without one (it signs in
 * with it), disables and enables an account (its key answers 401, then 200), disables and revokes a key, filters usage across accounts and downloads it as CSV, tests a provider
 * row, and finds every change in the audit log. Screenshots of each page go to test-output/screenshots/.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testPassword } from '../support/http-helpers.ts';
import {
  type DashboardRig,
  mustRun,
  screenshots,
  signIn as signInAt,
  startDashboardRig,
  warnIfSkipped,
} from '../support/browser.ts';
import type { TestGateway } from '../support/test-gateway.ts';

warnIfSkipped('operator console browser test');

describe.skipIf(!mustRun)('operator console in Chromium', () => {
  let rig: DashboardRig;
  let gateway: TestGateway;
  let base: string;
  let page: Page;
  let customer: { accountId: string; keyId: string; key: string; email: string };

  const shot = (name: string) =>
    page.screenshot({ path: path.join(screenshots, `operator-${name}.png`), fullPage: true });
  const heading = () => page.getByRole('heading', { level: 1 }).innerText();
  const go = async (label: string, title: string) => {
    await page.getByRole('navigation', { name: 'Operator' }).getByRole('link', { name: label }).click();
    await expect.poll(heading).toBe(title);
  };
  const complete = (key: string) => rig.complete(key, 'Hello operator');
  const signIn = (email: string) => signInAt(page, base, email);
  const signOut = async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await expect.poll(() => page.url()).toBe(`${base}/sign-in`);
  };

  beforeAll(async () => {
    rig = await startDashboardRig();
    ({ gateway, base } = rig);
    page = rig.browser.page;
    const services = gateway.gateway.core.services;
    const operator = await services.accounts.createAccount({ email: 'ops@example.com', password: testPassword });
    await services.accounts.setRole(operator.id, 'operator');
    await services.accounts.createAccount({ email: 'plain@example.com', password: testPassword });
    const email = 'customer@example.com';
    const account = await services.accounts.createAccount({ email, creditsUsd: 5 });
    const key = await services.apiKeys.create(account.id, { name: 'customer key', limits: { daily: 3 } });
    customer = { accountId: account.id, keyId: key.id, key: key.key, email };
    for (let call = 0; call < 3; call++) expect((await complete(key.key)).status).toBe(200);
  }, 60_000);

  afterAll(async () => rig?.close());

  it('shows a plain account no Operator section, and sends it away from operator pages', async () => {
    await signIn('plain@example.com');
    expect(await page.getByRole('navigation', { name: 'Operator' }).count()).toBe(0);
    await page.goto(`${base}/operator/accounts`);
    await expect.poll(() => page.url()).toBe(`${base}/keys`);
    const answer = await page.evaluate(async () => (await fetch('/api/operator/v1/accounts')).status);
    expect(answer).toBe(403);
    await signOut();
  }, 30_000);

  it('signs an operator in to an Operator section in the header, reachable by keyboard after the skip link', async () => {
    await signIn('ops@example.com');
    const nav = page.getByRole('navigation', { name: 'Operator' });
    expect(await nav.getByRole('link').allInnerTexts()).toEqual([
      'Accounts',
      'All usage',
      'Providers',
      'Catalog',
      'Audit log',
    ]);
    await go('Accounts', 'Accounts');
    // Moving to the page puts focus on its heading, as the account pages do.
    // (Polled: the page moves focus once it has rendered, which a loaded machine may take a moment to do.)
    await expect.poll(() => page.evaluate('document.activeElement?.tagName')).toBe('H1');
    // The skip link is the page's first stop, and leads past both navigations to the page's own fields.
    await page.getByRole('link', { name: 'Skip to content' }).focus();
    await page.keyboard.press('Enter');
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement?.closest("label")?.textContent')).toContain('Search by email');
    await shot('accounts');
  }, 30_000);

  it('finds an account, grants credit with a reason, refuses a removal past the balance, and removes some', async () => {
    await page.getByLabel('Search by email').fill('customer');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('button', { name: `Open ${customer.email}` }).click();
    await expect.poll(() => page.getByRole('heading', { level: 2 }).innerText()).toBe(customer.email);
    const balance = () => page.getByTestId('operator-balance').innerText();
    const before = Number((await balance()).replace(/[$,]/g, ''));
    await page.getByLabel('Amount in USD (negative removes)').fill('2.5');
    await page.getByLabel('Reason').fill('Refund of an outage');
    await page.getByRole('button', { name: 'Apply credit' }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Granted' }).count()).toBe(1);
    await expect.poll(async () => Number((await balance()).replace(/[$,]/g, ''))).toBeCloseTo(before + 2.5, 9);
    await page.getByLabel('Amount in USD (negative removes)').fill('-1000');
    await page.getByLabel('Reason').fill('Too much');
    await page.getByRole('button', { name: 'Apply credit' }).click();
    await expect.poll(() => page.getByRole('alert').innerText()).toContain('below zero');
    await page.getByLabel('Amount in USD (negative removes)').fill('-0.5');
    await page.getByLabel('Reason').fill('Correction');
    await page.getByRole('button', { name: 'Apply credit' }).click();
    await expect.poll(async () => Number((await balance()).replace(/[$,]/g, ''))).toBeCloseTo(before + 2, 9);
    await shot('account');
  }, 30_000);

  it('sets the password of an account made without one, which then signs in with it', async () => {
    const password = 'set in the console 42';
    const signIn = () =>
      fetch(`${base}/api/v1/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: customer.email, password }),
      });
    expect((await signIn()).status).toBe(401);
    await page.getByRole('button', { name: 'Set password' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('New password (8 to 256 characters)').fill(password);
    await dialog.getByRole('button', { name: 'Set password' }).click();
    await expect.poll(() => page.getByRole('status').innerText()).toContain('The password is set');
    expect(await page.getByRole('dialog').count()).toBe(0);
    expect((await signIn()).status).toBe(200);
  }, 30_000);

  it('disables the account (its key answers 401) and enables it again', async () => {
    await page.getByRole('button', { name: 'Disable account' }).click();
    await expect.poll(() => page.getByRole('button', { name: 'Enable account' }).count()).toBe(1);
    expect((await complete(customer.key)).status).toBe(401);
    await shot('account-disabled');
    await page.getByRole('button', { name: 'Enable account' }).click();
    await expect.poll(() => page.getByRole('button', { name: 'Disable account' }).count()).toBe(1);
    expect((await complete(customer.key)).status).toBe(200);
  }, 30_000);

  it("shows the account's keys with caps and spend, disables one, then revokes it after a confirmation", async () => {
    const keys = page.getByRole('table', { name: 'Keys of the account' });
    await expect.poll(() => keys.getByRole('row').count()).toBe(2);
    expect(await keys.innerText()).toContain('daily $3.00');
    await page.getByRole('button', { name: 'Disable key customer key' }).click();
    await expect.poll(() => page.getByRole('button', { name: 'Enable key customer key' }).count()).toBe(1);
    expect((await complete(customer.key)).status).toBe(401);
    await shot('keys');
    await page.getByRole('button', { name: 'Revoke key customer key' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('button', { name: 'Revoke key' }).click();
    await expect.poll(() => page.getByText('No keys.').count()).toBe(1);
  }, 30_000);

  it('filters usage across accounts, shows the totals, and downloads them as CSV', async () => {
    await go('All usage', 'Usage across accounts');
    await page.getByLabel('Account id').fill(customer.accountId);
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await expect.poll(() => page.getByTestId('usage-totals').innerText()).toMatch(/^4 records, \$/);
    expect(await page.getByRole('table').innerText()).toContain('sandbox/echo');
    await shot('usage');
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Download CSV' }).click(),
    ]);
    const file = await download.path();
    const lines = readFileSync(file, 'utf8').trim().split('\r\n');
    expect(lines[0]?.startsWith('createdAt,id,accountId,')).toBe(true);
    expect(lines).toHaveLength(5);
    expect(lines.slice(1).every((line) => line.includes(customer.accountId))).toBe(true);
  }, 30_000);

  it("lists provider rows with their health, and tests the sandbox's text row", async () => {
    await go('Providers', 'Providers');
    const row = page.getByRole('row').filter({ hasText: 'sandbox/echo' });
    expect(await row.innerText()).toContain('Closed');
    await page.getByRole('button', { name: 'Test sandbox/echo' }).click();
    await expect.poll(() => page.getByTestId('row-test-outcome').innerText()).toContain('sandbox/echo answered in');
    await shot('providers');
  }, 30_000);

  it('is usable at phone width (360 px): no sideways scrolling on any operator page', async () => {
    await page.setViewportSize({ width: 360, height: 780 });
    for (const [label, title] of [
      ['Accounts', 'Accounts'],
      ['All usage', 'Usage across accounts'],
      ['Providers', 'Providers'],
      ['Audit log', 'Audit log'],
    ] as const) {
      await go(label, title);
      await expect.poll(() => page.getByText('Loading…').count()).toBe(0);
      expect(await page.evaluate('document.documentElement.scrollWidth'), label).toBeLessThanOrEqual(360);
      await shot(`${label.toLowerCase().replace(' ', '-')}-phone`);
    }
    await page.setViewportSize({ width: 1280, height: 900 });
  }, 30_000);

  it('lists every change in the audit log, filtered by kind', async () => {
    await go('Audit log', 'Audit log');
    await page.getByLabel('Change').selectOption({ label: 'Account disabled' });
    await expect.poll(() => page.getByRole('table').getByRole('row').count()).toBe(2);
    const text = await page.getByRole('table').innerText();
    expect(text).toContain(customer.accountId);
    expect(text).toContain('Operator acct_');
    await page.getByLabel('Change').selectOption({ label: 'Credit changed' });
    await expect.poll(() => page.getByRole('table').getByRole('row').count()).toBe(3);
    await page.getByLabel('Change').selectOption({ label: 'Password set' });
    await expect.poll(() => page.getByRole('table').getByRole('row').count()).toBe(2);
    expect(await page.getByRole('table').innerText()).toContain(customer.accountId);
    await page.getByLabel('Change').selectOption({ label: 'Provider row tested' });
    await expect.poll(() => page.getByRole('table').getByRole('row').count()).toBe(2);
    await page.getByLabel('Change').selectOption({ label: 'All changes' });
    await shot('audit');
    expect(rig.browser.pageErrors).toEqual([]);
  }, 30_000);
});
