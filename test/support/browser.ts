import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { expect } from 'vitest';
import { builtDashboardDir } from '../../src/http/dashboard.ts';
import { freePort } from './free-port.ts';
import { testPassword } from './http-helpers.ts';
import { startTestGateway, type TestGateway, type TestGatewayOptions } from './test-gateway.ts';

/** What the dashboard's browser tests share: Debian's Chromium, its flags, and where screenshots go. */

export const chromiumPath = '/usr/bin/chromium';
export const hasChromium = existsSync(chromiumPath);
/** In CI a missing browser is a failure, never a silent skip. */
export const mustRun = hasChromium || Boolean(process.env.CI);
export const screenshots = path.resolve(import.meta.dirname, '../../test-output/screenshots');
/** Without the background-networking switches Chromium keeps dialling Google and stalls on the closed network. */
export const launchFlags = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export function warnIfSkipped(name: string): void {
  if (!mustRun)
    console.warn(
      `${name} skipped: ${chromiumPath} is missing (apt-get install -y chromium); with CI set this is a failure`,
    );
}

/** Throws unless Chromium and the built dashboard are there; makes the screenshot folder. */
export function checkBrowserPrerequisites(): void {
  if (!hasChromium)
    throw new Error(
      `${chromiumPath} is missing: install it (apt-get install -y chromium); CI must run the browser test`,
    );
  if (!existsSync(path.join(builtDashboardDir, 'index.html')))
    throw new Error(`${builtDashboardDir} is not built: run "npm run build" (npm test does)`);
  mkdirSync(screenshots, { recursive: true });
}

export interface BrowserSession {
  context: BrowserContext;
  page: Page;
  /** Script errors, refused policies and failed assets the page reported. */
  pageErrors: string[];
  close(): Promise<void>;
}

/** A fresh Chromium profile with one page, collecting the page's errors. */
export async function openBrowser(options: { permissions?: string[] } = {}): Promise<BrowserSession> {
  const userDataDir = mkdtempSync(path.join(tmpdir(), 'gw-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: chromiumPath,
    headless: true,
    args: launchFlags,
    viewport: { width: 1280, height: 900 },
    acceptDownloads: true,
    ...(options.permissions ? { permissions: options.permissions } : {}),
  });
  context.setDefaultTimeout(10_000);
  const page = context.pages()[0] ?? (await context.newPage());
  const pageErrors: string[] = [];
  page.on('pageerror', (error) => pageErrors.push(error.message));
  page.on('console', (message) => {
    // A refused Content-Security-Policy, a failed asset or a script error all surface here.
    if (message.type() === 'error' && !message.text().includes('status of 40')) pageErrors.push(message.text());
  });
  return {
    context,
    page,
    pageErrors,
    close: async () => {
      await context.close();
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

/** A gateway listening on 127.0.0.1 and a Chromium to drive its dashboard with. */
export interface DashboardRig {
  gateway: TestGateway;
  /** `http://127.0.0.1:<port>`, where the gateway listens. */
  base: string;
  browser: BrowserSession;
  /** A completion of sandbox-echo with `key`, over HTTP as a client sends it. */
  complete(key: string, content: string): Promise<Response>;
  close(): Promise<void>;
}

/**
 * Checks the prerequisites, starts a gateway (the shipped gateway.yaml unless `gateway` says otherwise) on a
 * free port of 127.0.0.1 and opens Chromium. PORT is that port, so the links the gateway makes (downloads,
 * polling) point where it listens.
 */
export async function startDashboardRig(
  options: { gateway?: TestGatewayOptions; permissions?: string[] } = {},
): Promise<DashboardRig> {
  checkBrowserPrerequisites();
  const port = await freePort();
  const gateway = await startTestGateway({
    ...options.gateway,
    env: { ...options.gateway?.env, PORT: String(port) },
  });
  const base = `http://127.0.0.1:${port}`;
  let browser: BrowserSession | undefined;
  try {
    await gateway.app.listen({ host: '127.0.0.1', port });
    browser = await openBrowser(options.permissions ? { permissions: options.permissions } : {});
  } catch (error) {
    await gateway.close();
    throw error;
  }
  const opened = browser;
  return {
    gateway,
    base,
    browser: opened,
    complete: (key, content) =>
      fetch(`${base}/api/v1/text/completions`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'sandbox-echo', messages: [{ role: 'user', content }] }),
      }),
    close: async () => {
      await opened.close();
      await gateway.close();
    },
  };
}

/** Signs in on the dashboard's sign-in page with the test password, and waits for the first page. */
export async function signIn(page: Page, base: string, email: string): Promise<void> {
  await page.goto(`${base}/sign-in`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(testPassword);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect.poll(() => page.getByRole('heading', { level: 1 }).innerText()).toBe('API keys');
}
