// The browser UI in a real Chromium (Debian's, driven by playwright-core), against
// the whole service: create an address, watch mail arrive without reloading, read it
// safely, delete it, juggle the session's addresses.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import { WEB_ROOT } from '../src/http/routes/ui.js';
import { DOMAIN, message, request, sendMail, startTestServer, type TestServer } from './helpers/harness.js';
import { CHROMIUM_PATH, serviceAvailable } from './helpers/services.js';

const ready = await serviceAvailable('chromium');

describe('web UI in Chromium', { skip: !ready && 'Chromium is not installed', timeout: 120_000 }, () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  // Counts every request a mail's HTML manages to make (it should make none).
  let tracker: Server;
  const tracked: string[] = [];
  const pageErrors: string[] = [];

  before(async () => {
    assert.ok(existsSync(`${WEB_ROOT}index.html`), `the UI is not built at ${WEB_ROOT}: run npm run build`);
    server = await startTestServer();
    tracker = createServer((req, res) => {
      tracked.push(req.url ?? '');
      res.end('x');
    });
    await new Promise<void>((r) => tracker.listen(0, '127.0.0.1', r));
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: ['--no-sandbox'] });
    page = await browser.newPage();
    page.on('pageerror', (err) => pageErrors.push(err.message));
  });
  after(async () => {
    await browser?.close();
    await new Promise((r) => tracker?.close(r));
    await server?.close();
  });

  it('serves the page with a strict Content-Security-Policy', async () => {
    const res = await request(server.httpUrl, '/');
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
    const csp = res.headers.get('content-security-policy') ?? '';
    assert.match(csp, /default-src 'self'/);
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.deepEqual((await request(server.httpUrl, '/ui-config.json')).json, { domains: [DOMAIN], turnstileSiteKey: null, customNames: true });
    // Unknown paths are still the API's plain-text 404.
    const missing = await request(server.httpUrl, '/no-such-page');
    assert.equal(missing.status, 404);
    assert.match(missing.headers.get('content-type') ?? '', /^text\/plain/);
  });

  it('creates an address and shows mail the moment it arrives, without a reload', async () => {
    await page.goto(server.httpUrl);
    await page.getByText('A disposable inbox').waitFor();
    await page.getByLabel('Name (optional)').fill('ui-first');
    await page.getByRole('button', { name: 'New address' }).click();
    const active = page.getByLabel('Active address');
    await active.waitFor();
    assert.equal(await active.inputValue(), `ui-first@${DOMAIN}`);
    await page.getByText(`Waiting for mail to ui-first@${DOMAIN}`).waitFor();
    await page.locator('.live.on').waitFor();

    const html = [
      '<p>Hello from the UI test. Your code is <b>482913</b>.</p>',
      `<img src="http://127.0.0.1:${(tracker.address() as AddressInfo).port}/pixel.gif" alt="">`,
      `<script>fetch('http://127.0.0.1:${(tracker.address() as AddressInfo).port}/script'); parent.document.title = 'pwned';</script>`,
      '<a href="https://example.com/confirm?t=1">Confirm</a>',
    ].join('');
    const raw = message(
      { From: 'Shop <shop@example.com>', To: `ui-first@${DOMAIN}`, Subject: 'Confirm your account', 'MIME-Version': '1.0', 'Content-Type': 'multipart/alternative; boundary="b1"' },
      ['--b1', 'Content-Type: text/plain; charset=utf-8', '', 'Your code is 482913.', '--b1', 'Content-Type: text/html; charset=utf-8', '', html, '--b1--', ''].join('\n'),
    );
    await sendMail(server.smtpPort, { to: [`ui-first@${DOMAIN}`], message: raw });
    const item = page.locator('.list li').filter({ hasText: 'Confirm your account' });
    await item.waitFor({ timeout: 5000 });
    assert.equal(await item.locator('.code').textContent(), '482913');
    assert.equal(await item.locator('.from').textContent(), 'Shop');
    assert.match((await page.locator('.toolbar strong').textContent()) ?? '', /^1 mail$/);
  });

  it('renders the HTML in a sandbox: no script runs and nothing remote loads', async () => {
    await page.locator('.list li .item').first().click();
    await page.getByRole('heading', { name: 'Confirm your account' }).waitFor();
    const frame = page.frameLocator('iframe.html');
    await frame.getByText('Hello from the UI test.').waitFor();
    await page.waitForTimeout(500);
    assert.deepEqual(tracked, [], 'the mail reached the network');
    assert.notEqual(await page.title(), 'pwned');
    assert.equal(await page.locator('iframe.html').getAttribute('sandbox'), 'allow-popups allow-popups-to-escape-sandbox');
    assert.equal(await page.locator('.codes .code').first().textContent(), '482913');
    await page.getByRole('tab', { name: 'Text' }).click();
    assert.match((await page.locator('pre.text').textContent()) ?? '', /Your code is 482913\./);
    await page.getByRole('tab', { name: 'Source' }).click();
    assert.match((await page.locator('pre.raw').textContent()) ?? '', /^Received: from /);
  });

  it('deletes a mail, and shows deletions made elsewhere (another tab, the API) at once', async () => {
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByText(`Waiting for mail to ui-first@${DOMAIN}`).waitFor();
    assert.equal((await page.locator('.toolbar strong').textContent())?.trim(), '0 mails');

    // Two more mails, then one deleted through the API with the page's own cookie.
    for (const subject of ['second', 'third']) await sendMail(server.smtpPort, { to: [`ui-first@${DOMAIN}`], message: message({ Subject: subject }, `${subject} body`) });
    await page.locator('.list li').filter({ hasText: 'third' }).waitFor();
    const jwt = (await page.context().cookies()).find((c) => c.name === 'jwt')!.value;
    const list = await request(server.httpUrl, '/api/mails?limit=10&offset=0', { jwt });
    const second = list.json.results.find((m: { metadata: string }) => JSON.parse(m.metadata).subject === 'second');
    assert.equal((await request(server.httpUrl, `/api/mails/${second.uuid}`, { method: 'DELETE', jwt })).status, 200);
    await page.locator('.list li').filter({ hasText: 'second' }).waitFor({ state: 'detached' });
    assert.equal(await page.locator('.list li').count(), 1);
  });

  it('holds several addresses in the session: switch between them, delete one, forget them', async () => {
    await page.getByLabel('Name (optional)').fill('ui-second');
    await page.getByRole('button', { name: 'New address' }).click();
    const active = page.getByLabel('Active address');
    await page.getByText(`Waiting for mail to ui-second@${DOMAIN}`).waitFor();
    assert.equal(await active.inputValue(), `ui-second@${DOMAIN}`);
    assert.deepEqual(await active.locator('option').allTextContents(), [`ui-first@${DOMAIN}`, `ui-second@${DOMAIN}`]);

    await active.selectOption(`ui-first@${DOMAIN}`);
    await page.locator('.list li').filter({ hasText: 'third' }).waitFor();

    page.once('dialog', (d) => void d.accept());
    await page.getByRole('button', { name: 'Delete address' }).click();
    await page.getByText(`Waiting for mail to ui-second@${DOMAIN}`).waitFor();
    assert.deepEqual(await active.locator('option').allTextContents(), [`ui-second@${DOMAIN}`]);

    await page.getByRole('button', { name: 'Forget' }).click();
    await page.getByText('A disposable inbox').waitFor();
    // A refused request shows the API's sentence.
    await page.getByLabel('Name (optional)').fill('bad name!');
    await page.getByRole('button', { name: 'New address' }).click();
    await page.getByRole('alert').waitFor();
    assert.match((await page.getByRole('alert').textContent()) ?? '', /name/i);
    assert.deepEqual(pageErrors, []);
  });
});
