// Hostile content in the reader (MailHog CVE-2022-50908, smtp4dev's srcdoc XSS):
// a subject, sender, file name and links built to run script must render as text,
// and the mail's HTML runs in a frame without scripts or the page's origin.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { WEB_ROOT } from '../src/http/routes/ui.js';
import { DOMAIN, sendMail, startTestServer, type TestServer } from './helpers/harness.js';
import { CHROMIUM_PATH, serviceAvailable } from './helpers/services.js';

const ready = await serviceAvailable('chromium');

describe('web UI: hostile mail renders as text', { skip: !ready && 'Chromium is not installed', timeout: 120_000 }, () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  const dialogs: string[] = [];

  before(async () => {
    assert.ok(existsSync(`${WEB_ROOT}index.html`), `the UI is not built at ${WEB_ROOT}: run npm run build`);
    server = await startTestServer();
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: ['--no-sandbox'] });
    page = await browser.newPage();
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  it('subject, sender, file name and javascript: links never run script', async () => {
    await page.goto(server.httpUrl);
    await page.getByLabel('Name (optional)').fill('ui-hostile');
    await page.getByRole('button', { name: 'New address' }).click();
    await page.getByText(`Waiting for mail to ui-hostile@${DOMAIN}`).waitFor();

    const subject = '<img src=x onerror="window.__pwned=1;alert(1)">Invoice';
    const raw = [
      `From: "<script>window.__pwned=2</script>" <evil@example.com>`,
      `To: ui-hostile@${DOMAIN}`,
      `Subject: ${subject}`,
      'MIME-Version: 1.0',
      'Content-Type: multipart/mixed; boundary="m"',
      '',
      '--m',
      'Content-Type: multipart/alternative; boundary="a"',
      '',
      '--a',
      'Content-Type: text/plain',
      '',
      'Open javascript:window.__pwned=3 now',
      '--a',
      'Content-Type: text/html',
      '',
      '<p>Hi <a href="javascript:window.__pwned=4;alert(4)">click</a><img src=x onerror="parent.__pwned=5;alert(5)"><script>parent.__pwned=6</script></p>',
      '--a--',
      '--m',
      'Content-Type: text/plain; name="<img src=x onerror=window.__pwned=7>.txt"',
      'Content-Disposition: attachment; filename="<img src=x onerror=window.__pwned=7>.txt"',
      '',
      'x',
      '--m--',
      '',
    ].join('\r\n');
    await sendMail(server.smtpPort, { to: [`ui-hostile@${DOMAIN}`], message: raw });
    const item = page.locator('.list li').filter({ hasText: 'Invoice' });
    await item.waitFor({ timeout: 5000 });
    assert.match((await item.textContent()) ?? '', /<img src=x onerror=/, 'the subject is shown as text');
    await item.locator('.item').click();
    await page.getByRole('heading', { name: subject }).waitFor();
    const frame = page.frameLocator('iframe.html');
    await frame.getByText('click').waitFor();
    await page.waitForTimeout(500);

    assert.deepEqual(dialogs, [], 'no dialog opened');
    assert.equal(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned), undefined, 'no script ran in the page');
    for (const f of page.frames()) {
      assert.equal(await f.evaluate(() => (window as unknown as { __pwned?: number }).__pwned).catch(() => undefined), undefined, `no script ran in ${f.url()}`);
    }
    const sandbox = (await page.locator('iframe.html').getAttribute('sandbox')) ?? '';
    assert.doesNotMatch(sandbox, /allow-scripts|allow-same-origin/);
    assert.equal(await page.locator('a[href^="javascript:" i]').count(), 0, 'no javascript: link in the page itself');
    assert.match((await page.locator('main').textContent()) ?? '', /<script>window\.__pwned=2<\/script>|evil@example\.com/, 'the sender is text');
    assert.match((await page.locator('main').textContent()) ?? '', /<img src=x onerror=window\.__pwned=7>\.txt/, 'the file name is text');
  });
});
