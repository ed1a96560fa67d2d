import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { builtDashboardDir } from '../../src/http/dashboard.ts';

/** Debian's Chromium, which the browser tests drive through playwright-core. */
export const chromiumPath = '/usr/bin/chromium';
export const hasChromium = existsSync(chromiumPath);
/** In CI a missing browser is a failure, never a silent skip. */
export const browserTestsMustRun = hasChromium || Boolean(process.env.CI);
export const screenshots = path.resolve(import.meta.dirname, '../../test-output/screenshots');

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

export interface OpenedBrowser {
  context: BrowserContext;
  page: Page;
  /** Script errors, refused assets and Content-Security-Policy refusals the page reported. */
  pageErrors: string[];
  close(): Promise<void>;
}

/**
 * Chromium with a profile of its own, at desktop size, allowed the clipboard; fails when the browser or the
 * built dashboard is missing, and makes the screenshots folder.
 */
export async function openBrowser(): Promise<OpenedBrowser> {
  if (!hasChromium)
    throw new Error(
      `${chromiumPath} is missing: install it (apt-get install -y chromium); CI must run the browser test`,
    );
  if (!existsSync(path.join(builtDashboardDir, 'index.html')))
    throw new Error(`${builtDashboardDir} is not built: run "npm run build" (npm test does)`);
  mkdirSync(screenshots, { recursive: true });
  const userDataDir = mkdtempSync(path.join(tmpdir(), 'gw-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: chromiumPath,
    headless: true,
    args: launchFlags,
    viewport: { width: 1280, height: 900 },
    permissions: ['clipboard-read', 'clipboard-write'],
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
