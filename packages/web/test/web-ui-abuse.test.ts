// ABUSE_CONTACT in the web UI's footer (docs/operating.md "Abuse controls"), in a real Chromium:
// an address is a mail link, a URL a link to itself, and without the variable there is no footer.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { WEB_ROOT } from '../../server/src/http/routes/ui.js';
import { request, startTestServer, type TestServer } from '../../server/test/helpers/harness.js';
import { CHROMIUM_PATH, serviceAvailable } from '../../server/test/helpers/services.js';

const ready = serviceAvailable('chromium');

describe('web UI footer with ABUSE_CONTACT in Chromium', { skip: !ready && 'Chromium is not installed', timeout: 120_000 }, () => {
  let browser: Browser;
  const servers: Record<'email' | 'url' | 'none', TestServer> = {} as never;
  before(async () => {
    assert.ok(existsSync(`${WEB_ROOT}index.html`), `the UI is not built at ${WEB_ROOT}: run npm run build`);
    servers.email = await startTestServer({ ABUSE_CONTACT: 'abuse@ops.example' });
    servers.url = await startTestServer({ ABUSE_CONTACT: 'https://ops.example/report?from=ui' });
    servers.none = await startTestServer();
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: ['--no-sandbox'] });
  });
  after(async () => {
    await browser?.close();
    for (const s of Object.values(servers)) await s?.close();
  });

  /** The footer's text and its link's target, or undefined when the page has no footer. */
  async function footerOf(server: TestServer): Promise<{ text: string; href: string | null } | undefined> {
    const page = await browser.newPage();
    try {
      await page.goto(server.httpUrl);
      await page.getByText('A disposable inbox').waitFor();
      const footer = page.locator('footer');
      if ((await footer.count()) === 0) return undefined;
      return { text: (await footer.innerText()).trim(), href: await footer.getByRole('link').getAttribute('href') };
    } finally {
      await page.close();
    }
  }

  it('an address: "Report abuse:" and a mailto: link', async () => {
    assert.deepEqual(await footerOf(servers.email), { text: 'Report abuse: abuse@ops.example', href: 'mailto:abuse@ops.example' });
    assert.equal((await request(servers.email.httpUrl, '/ui-config.json')).json.abuseContact, 'abuse@ops.example');
  });

  it('a URL: a link to it', async () => {
    assert.deepEqual(await footerOf(servers.url), { text: 'Report abuse: https://ops.example/report?from=ui', href: 'https://ops.example/report?from=ui' });
  });

  it('unset: no footer, and ui-config says null', async () => {
    assert.equal(await footerOf(servers.none), undefined);
    assert.equal((await request(servers.none.httpUrl, '/ui-config.json')).json.abuseContact, null);
  });
});
