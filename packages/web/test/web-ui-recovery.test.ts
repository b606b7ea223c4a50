// The web UI where a browser session can be lost or split (Chromium): a fourth address
// and Forget ask first; two tabs of one browser follow each other's switch instead of
// one of them sending another address's cookie for its own mail; and a mail opened
// while the server is down is loaded once the page's live connection is back.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { WEB_ROOT } from '../../server/src/http/routes/ui.js';
import { DOMAIN, message, sendMail, startTestServer, type TestServer } from '../../server/test/helpers/harness.js';
import { CHROMIUM_PATH, skipUnless } from '../../server/test/helpers/services.js';

const skip = skipUnless('chromium');

describe('web UI: a session kept whole', { timeout: 180_000 }, () => {
  let server: TestServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const pageErrors: string[] = [];

  before(async () => {
    if (skip) return;
    assert.ok(existsSync(`${WEB_ROOT}index.html`), `the UI is not built at ${WEB_ROOT}: run npm run build`);
    server = await startTestServer();
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: ['--no-sandbox'] });
    context = await browser.newContext();
    page = await context.newPage();
    page.on('pageerror', (e) => pageErrors.push(e.message));
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  const create = async (p: Page, name: string) => {
    await p.getByLabel('Name (optional)').fill(name);
    await p.getByRole('button', { name: 'New address' }).click();
  };

  it('a fourth address asks first, naming the address it drops from the browser', { skip }, async () => {
    await page.goto(server.httpUrl);
    for (const name of ['rec-one', 'rec-two', 'rec-three']) {
      await create(page, name);
      await page.getByText(`Waiting for mail to ${name}@${DOMAIN}`).waitFor();
    }
    const active = page.getByLabel('Active address');
    let asked = '';
    page.once('dialog', (d) => {
      asked = d.message();
      void d.dismiss();
    });
    await create(page, 'rec-four');
    assert.match(asked, new RegExp(`drops rec-one@${DOMAIN.replace(/\./g, '\\.')} from its list`));
    assert.deepEqual(await active.locator('option').allTextContents(), ['one', 'two', 'three'].map((n) => `rec-${n}@${DOMAIN}`));
    page.once('dialog', (d) => void d.accept());
    await create(page, 'rec-four');
    await page.getByText(`Waiting for mail to rec-four@${DOMAIN}`).waitFor();
    assert.deepEqual(await active.locator('option').allTextContents(), ['two', 'three', 'four'].map((n) => `rec-${n}@${DOMAIN}`));
  });

  it('two tabs of one browser: a switch in one is followed by the other, whose mail then opens', { skip }, async () => {
    await sendMail(server.smtpPort, { to: [`rec-two@${DOMAIN}`], message: message({ Subject: 'for two' }, 'mail of rec-two') });
    const other = await context.newPage();
    try {
      await other.goto(server.httpUrl);
      assert.equal(await other.getByLabel('Active address').inputValue(), `rec-four@${DOMAIN}`);
      // This tab switches; the other one follows.
      await page.getByLabel('Active address').selectOption(`rec-two@${DOMAIN}`);
      await page.locator('.list li').filter({ hasText: 'for two' }).waitFor();
      await other.locator('.list li').filter({ hasText: 'for two' }).waitFor({ timeout: 10_000 });
      assert.equal(await other.getByLabel('Active address').inputValue(), `rec-two@${DOMAIN}`);
      await other.locator('.list li').filter({ hasText: 'for two' }).click();
      await other.getByRole('tab', { name: 'Text' }).click();
      await other.locator('pre.text').filter({ hasText: 'mail of rec-two' }).waitFor();
      assert.equal(await other.getByRole('alert').count(), 0);
    } finally {
      await other.close();
    }
  });

  it('a mail opened while the server is down is loaded once the live connection is back', { skip }, async () => {
    await sendMail(server.smtpPort, { to: [`rec-two@${DOMAIN}`], message: message({ Subject: 'offline read' }, 'read me later') });
    await page.locator('.list li').filter({ hasText: 'offline read' }).waitFor();
    // The server stops (its data kept) and comes back on the same ports.
    const { dataDir, httpPort, smtpPort } = server;
    await server.close({ keepData: true });
    await page.getByRole('status').filter({ hasText: 'Live updates interrupted' }).waitFor({ timeout: 15_000 });
    await page.locator('.list li').filter({ hasText: 'offline read' }).click();
    await page.getByRole('alert').waitFor();
    server = await startTestServer({ HTTP_PORT: String(httpPort), SMTP_PORT: String(smtpPort) }, dataDir);
    await page.locator('.live.on').waitFor({ timeout: 35_000 });
    await page.getByRole('tab', { name: 'Text' }).click();
    await page.locator('pre.text').filter({ hasText: 'read me later' }).waitFor({ timeout: 10_000 });
    assert.equal(await page.getByRole('alert').count(), 0, 'the error of the failed fetch is gone');
    assert.deepEqual(pageErrors, []);
  });
});
