// A service and Debian's Chromium for one browser suite: call inside describe(); both
// start before its tests and stop after them.
import { after, before } from 'node:test';
import { chromium, type Browser } from 'playwright-core';
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
