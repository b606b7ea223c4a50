// The browser UI in a real Chromium (Debian's, driven by playwright-core), against
// the whole service: create an address, watch mail arrive without reloading, read it
// safely, delete it, juggle the session's addresses.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import { WEB_ROOT } from '../../server/src/http/routes/ui.js';
import { DOMAIN, message, request, sendMail, startTestServer, type TestServer } from '../../server/test/helpers/harness.js';
import { CHROMIUM_PATH, serviceAvailable } from '../../server/test/helpers/services.js';

const ready = serviceAvailable('chromium');

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
    assert.deepEqual((await request(server.httpUrl, '/ui-config.json')).json, { domains: [DOMAIN], turnstileSiteKey: null, customNames: true, challenge: 'off', abuseContact: null });
    // Unknown paths are still the API's plain-text 404.
    const missing = await request(server.httpUrl, '/no-such-page');
    assert.equal(missing.status, 404);
    assert.match(missing.headers.get('content-type') ?? '', /^text\/plain/);
  });

  // One address's story, in steps that build on each other (the mail the first step receives is
  // the one the next reads and deletes): one case, so no step depends on another case having run.
  it('an address in one tab: mail arrives live, renders sandboxed, is deleted here and elsewhere; several addresses in the session', async (t) => {
    await t.test('creates an address and shows mail the moment it arrives, without a reload', async () => {
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
      // It arrives unread: said before the sender (web-ui-unread.test.ts).
      assert.equal(await item.locator('.from').textContent(), 'Unread, Shop');
      assert.match((await page.locator('.toolbar strong').textContent()) ?? '', /^1 mail$/);
    });

    await t.test('renders the HTML in a sandbox: no script runs and nothing remote loads', async () => {
      await page.locator('.list li .item').first().click();
      await page.getByRole('heading', { name: 'Confirm your account' }).waitFor();
      const frame = page.frameLocator('iframe.html');
      await frame.getByText('Hello from the UI test.').waitFor();
      // The frame's load event: its scripts and images (which hold the event back) are done with, so
      // a script that ran or an image that loaded has done so by now.
      await (await (await page.locator('iframe.html').elementHandle())!.contentFrame())!.waitForLoadState('load');
      assert.deepEqual(tracked, [], 'the mail reached the network');
      assert.notEqual(await page.title(), 'pwned');
      assert.equal(await page.locator('iframe.html').getAttribute('sandbox'), 'allow-popups allow-popups-to-escape-sandbox');
      assert.equal(await page.locator('.codes .code').first().textContent(), '482913');
      await page.getByRole('tab', { name: 'Text' }).click();
      assert.match((await page.locator('pre.text').textContent()) ?? '', /Your code is 482913\./);
      await page.getByRole('tab', { name: 'Source' }).click();
      assert.match((await page.locator('pre.raw').textContent()) ?? '', /^Received: from /);
    });

    await t.test('deletes a mail, and shows deletions made elsewhere (another tab, the API) at once', async () => {
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
      assert.equal((await page.locator('.toolbar strong').textContent())?.trim(), '1 mail');

      // Deleted here, the mail's own mail_deleted event arrives too: it is counted once.
      await sendMail(server.smtpPort, { to: [`ui-first@${DOMAIN}`], message: message({ Subject: 'fourth' }, 'fourth body') });
      await page.locator('.list li').filter({ hasText: 'fourth' }).click();
      await page.getByRole('button', { name: 'Delete', exact: true }).click();
      await page.locator('.list li').filter({ hasText: 'fourth' }).waitFor({ state: 'detached' });
      // The keyboard goes to the mail now in its place, not back to the top of the page.
      await page.waitForFunction(() => document.activeElement?.classList.contains('item'));
      assert.match((await page.evaluate(() => document.activeElement?.textContent)) ?? '', /third/);
      // The stream keeps its order: once the next mail is listed, the deletion's event has been handled.
      await sendMail(server.smtpPort, { to: [`ui-first@${DOMAIN}`], message: message({ Subject: 'fifth' }, 'fifth body') });
      await page.locator('.list li').filter({ hasText: 'fifth' }).waitFor();
      assert.equal((await page.locator('.toolbar strong').textContent())?.trim(), '2 mails');
    });

    await t.test('holds several addresses in the session: switch between them, delete one, forget them', async () => {
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
      // The page goes on with that address, after a reload too: its mail arrives, nothing is refused.
      await page.reload();
      await sendMail(server.smtpPort, { to: [`ui-second@${DOMAIN}`], message: message({ Subject: 'after the delete' }, 'still here') });
      await page.locator('.list li').filter({ hasText: 'after the delete' }).waitFor();
      assert.equal(await page.getByRole('alert').count(), 0);

      // Forget asks first: dismissed, nothing changes; accepted, the addresses leave this browser.
      page.once('dialog', (d) => void d.dismiss());
      await page.getByRole('button', { name: 'Forget' }).click();
      assert.equal(await active.inputValue(), `ui-second@${DOMAIN}`);
      page.once('dialog', (d) => {
        assert.match(d.message(), /Forget every address of this browser\?/);
        void d.accept();
      });
      await page.getByRole('button', { name: 'Forget' }).click();
      await page.getByText('A disposable inbox').waitFor();
      // A name that is taken (ui-second lives on, forgotten here), said in the page's words.
      await page.getByLabel('Name (optional)').fill('ui-second');
      await page.getByRole('button', { name: 'New address' }).click();
      await page.getByRole('alert').waitFor();
      assert.equal(await page.getByRole('alert').textContent(), `ui-second@${DOMAIN} is taken. Choose another name, or leave the name empty for a random one.`);
      // A refused request shows the API's sentence.
      await page.getByLabel('Name (optional)').fill('bad name!');
      await page.getByRole('button', { name: 'New address' }).click();
      await page.getByRole('alert').waitFor();
      assert.match((await page.getByRole('alert').textContent()) ?? '', /name/i);
      assert.deepEqual(pageErrors, []);
    });
  });
});

describe('web UI with the bot challenge on', { skip: !ready && 'Chromium is not installed', timeout: 60_000 }, () => {
  it('shows the Turnstile widget and sends its token as cf_token', async () => {
    // Cloudflare's siteverify, played by a local server: the token "good" passes.
    const verified: Record<string, string>[] = [];
    const verifier = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const fields = Object.fromEntries(new URLSearchParams(body));
        verified.push(fields);
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ success: fields['response'] === 'good' }));
      });
    });
    await new Promise<void>((r) => verifier.listen(0, '127.0.0.1', r));
    const server = await startTestServer({
      TURNSTILE_SECRET_KEY: 'ui-secret',
      TURNSTILE_SITE_KEY: 'ui-site-key',
      TURNSTILE_VERIFY_URL: `http://127.0.0.1:${(verifier.address() as AddressInfo).port}/siteverify`,
    });
    const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: ['--no-sandbox'] });
    try {
      const csp = (await request(server.httpUrl, '/')).headers.get('content-security-policy') ?? '';
      assert.match(csp, /script-src 'self' https:\/\/challenges\.cloudflare\.com/);
      const page = await browser.newPage();
      // Cloudflare's widget script, played by a stand-in that renders one button.
      let sitekey = '';
      await page.exposeFunction('reportSitekey', (k: string) => (sitekey = k));
      await page.route('https://challenges.cloudflare.com/turnstile/v0/api.js*', (route) =>
        route.fulfill({
          contentType: 'text/javascript',
          body: `window.turnstile = { render(el, o) { window.reportSitekey(o.sitekey); const b = document.createElement('button'); b.type = 'button'; b.textContent = 'I am human'; b.onclick = () => o.callback('good'); el.appendChild(b); return 'w'; }, remove() {} };`,
        }),
      );
      await page.goto(server.httpUrl);
      const create = page.getByRole('button', { name: 'New address' });
      await page.getByRole('button', { name: 'I am human' }).waitFor();
      assert.equal(sitekey, 'ui-site-key');
      assert.equal(await create.isDisabled(), true, 'no address without a challenge token');
      await page.getByRole('button', { name: 'I am human' }).click();
      await create.click();
      await page.getByLabel('Active address').waitFor();
      assert.equal(verified.length, 1);
      assert.equal(verified[0]!['response'], 'good');
      assert.equal(verified[0]!['secret'], 'ui-secret');
      // A token is good once: the widget is shown again for the next address.
      await page.getByRole('button', { name: 'I am human' }).waitFor();
      assert.equal(await create.isDisabled(), true);
    } finally {
      await browser.close();
      await server.close();
      await new Promise((r) => verifier.close(r));
    }
  });
});
