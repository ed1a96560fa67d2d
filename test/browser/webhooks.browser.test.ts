/**
 * The dashboard's Webhooks page in a real browser (Debian's Chromium, driven by playwright-core) against a real
 * gateway on 127.0.0.1 and a receiver on loopback: an account adds an endpoint (its secret shown once, with a
 * copy button), sends a test event that arrives signed as the standardwebhooks library verifies, reads it in
 * the delivery log, sets the low-balance threshold, and removes the endpoint. Screenshots, wide and at phone
 * width, go to test-output/screenshots/.
 */
import path from 'node:path';
import type { Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DashboardRig, mustRun, screenshots, startDashboardRig, warnIfSkipped } from '../support/browser.ts';
import { shippedConfigWith } from '../support/http-helpers.ts';
import { WebhookReceiver } from '../support/webhook-receiver.ts';

warnIfSkipped('webhooks browser test');

describe.skipIf(!mustRun)('the Webhooks page in Chromium', () => {
  let receiver: WebhookReceiver;
  let base: string;
  let page: Page;
  let rig: DashboardRig;
  let pageErrors: string[];
  let secret = '';

  const shot = (name: string) => page.screenshot({ path: path.join(screenshots, `${name}.png`), fullPage: true });

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    rig = await startDashboardRig({
      gateway: {
        configText: shippedConfigWith({
          remoteMedia: 'remoteMedia:\n  allowPrivateAddresses: true',
          webhooks: 'webhooks:\n  retryBaseMs: 50\n  idlePollMs: 50',
        }),
      },
      permissions: ['clipboard-read', 'clipboard-write'],
    });
    ({ base } = rig);
    ({ page, pageErrors } = rig.browser);
  }, 60_000);

  afterAll(async () => {
    await rig?.close();
    await receiver?.close();
  });

  it('adds an endpoint and shows its signing secret once, with a copy button', async () => {
    await page.goto(`${base}/sign-up`);
    await page.getByLabel('Email').fill('hooks@example.com');
    await page.getByLabel('Password').fill('a long enough password');
    await page.getByRole('button', { name: 'Create account' }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).innerText()).toBe('API keys');
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Webhooks' }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).innerText()).toBe('Webhooks');
    await expect.poll(() => page.getByText('No endpoints yet.').count()).toBe(1);

    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add an endpoint' });
    await dialog.getByLabel('URL (https)').fill(receiver.url);
    await dialog.getByLabel('Description (optional)').fill('local receiver');
    // No event chosen: the form says so and stays open.
    await dialog.getByRole('button', { name: 'Add endpoint' }).click();
    await expect.poll(() => dialog.getByRole('alert').innerText()).toBe('Choose at least one event');
    await dialog.getByRole('checkbox', { name: /balance\.low/ }).check();
    await dialog.getByRole('checkbox', { name: /media_job\.completed/ }).check();
    await dialog.getByRole('button', { name: 'Add endpoint' }).click();

    const shown = page.getByRole('dialog', { name: 'Your endpoint is added' });
    secret = await shown.getByLabel('Signing secret').inputValue();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    await shown.getByRole('button', { name: 'Copy' }).click();
    await expect.poll(() => shown.getByRole('status').innerText()).toMatch(/Copied|select the text/);
    await shot('webhooks-secret');
    await shown.getByRole('button', { name: 'Done' }).click();
    const card = page.getByRole('article', { name: receiver.url });
    await expect.poll(() => card.innerText()).toContain('balance.low');
    // The secret is nowhere on the page once its dialog is closed.
    expect(await page.content()).not.toContain(secret);
  }, 30_000);

  it('sends a test event signed with that secret, and shows it in the delivery log', async () => {
    const card = page.getByRole('article', { name: receiver.url });
    await card.getByRole('button', { name: 'Send test event' }).click();
    await expect.poll(() => page.getByRole('status').first().innerText()).toMatch(/Test event queued/);
    const [request] = await receiver.waitFor(1);
    const event = new Webhook(secret).verify(request!.body, {
      'webhook-id': String(request!.headers['webhook-id']),
      'webhook-timestamp': String(request!.headers['webhook-timestamp']),
      'webhook-signature': String(request!.headers['webhook-signature']),
    });
    expect(event).toMatchObject({ type: 'webhook.test' });

    await card.getByRole('button', { name: 'Delivery log' }).click();
    const log = page.getByRole('dialog', { name: `Deliveries to ${receiver.url}` });
    await expect
      .poll(async () => {
        await log.getByRole('button', { name: 'Refresh' }).click();
        return log.getByTestId('deliveries').innerText();
      })
      .toMatch(/webhook\.test[\s\S]*succeeded[\s\S]*200/);
    expect(await log.innerText()).toContain(String(request!.headers['webhook-id']));
    await shot('webhooks-deliveries');
    await log.getByRole('button', { name: 'Close', exact: true }).click();
  }, 30_000);

  it('sets the low-balance threshold, kept across a reload', async () => {
    const field = page.getByLabel('Threshold (USD)');
    await field.fill('not money');
    await page.getByRole('button', { name: 'Save threshold' }).click();
    await expect.poll(() => page.getByRole('alert').innerText()).toContain('USD');
    await field.fill('2.5');
    await page.getByRole('button', { name: 'Save threshold' }).click();
    await expect.poll(() => page.getByText('Saved', { exact: true }).count()).toBe(1);
    await page.reload();
    await expect.poll(() => page.getByLabel('Threshold (USD)').inputValue()).toBe('2.5');
    await shot('webhooks');
    await page.setViewportSize({ width: 390, height: 844 });
    await shot('webhooks-narrow');
    await page.setViewportSize({ width: 1280, height: 900 });
  }, 30_000);

  it('removes the endpoint', async () => {
    const card = page.getByRole('article', { name: receiver.url });
    await card.getByRole('button', { name: 'Remove' }).click();
    await page.getByRole('dialog', { name: 'Remove the endpoint?' }).getByRole('button', { name: 'Remove' }).click();
    await expect.poll(() => page.getByText('No endpoints yet.').count()).toBe(1);
    expect(pageErrors).toEqual([]);
  }, 30_000);
});
