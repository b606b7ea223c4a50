// A service and Debian's Chromium for one browser suite: call inside describe(); both
// start before its tests and stop after them.
import { after, before } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startTestServer, type TestServer } from './harness.js';
import { CHROMIUM_PATH } from './services.js';

export function serverAndBrowser(env: Record<string, string> = {}): { readonly server: TestServer; readonly browser: Browser } {
  let server: TestServer | undefined;
  let browser: Browser | undefined;
  before(async () => {
    server = await startTestServer(env);
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: ['--no-sandbox'] });
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });
  return {
    get server() {
      return server!;
    },
    get browser() {
      return browser!;
    },
  };
}

/**
 * Opens `<httpUrl>/#token=<jwt>` and agrees to the question the page asks before a link
 * opens an inbox (packages/web/src/open-inbox.tsx). Only for a link to an inbox that is
 * not already the active one: otherwise no question comes and this times out.
 */
export async function openInboxLink(page: Page, httpUrl: string, jwt: string): Promise<string> {
  const [dialog] = await Promise.all([page.waitForEvent('dialog'), page.goto(`${httpUrl}/#token=${jwt}`)]);
  const question = dialog.message();
  await dialog.accept();
  return question;
}
