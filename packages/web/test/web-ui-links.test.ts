// Links in a mail, as the web UI shows them (Chromium): the HTML part is rendered in a
// sandboxed frame (packages/web/src/html-view.tsx) whose document starts with
// <base target="_blank">, on a page served with Referrer-Policy: no-referrer. So a link is
// the mail's own <a>, with its href exactly; clicking it opens a new tab at that address,
// with no Referer and no window.opener; a link that asks for the app's own tab (_top), its
// frame (_self) or runs script (javascript:) gets nowhere. The link targets are a local
// HTTP server that records every request.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { WEB_ROOT } from '../../server/src/http/routes/ui.js';
import { createAddress, sendMail, startTestServer, type TestServer } from '../../server/test/helpers/harness.js';
import { CHROMIUM_PATH, skipUnless } from '../../server/test/helpers/services.js';
import { openInboxLink } from '../../server/test/helpers/chromium.js';

// Without Chromium the cases are registered as skipped, with the reason.
const skip = skipUnless('chromium');

describe('web UI: links in a mail', { timeout: 120_000 }, () => {
  let server: TestServer;
  let browser: Browser;
  let target: Server;
  let base: string;
  /** Requests that reached the link target (favicons left out). */
  const hits: { url: string; headers: IncomingHttpHeaders }[] = [];
  let address: string;
  let jwt: string;

  before(async () => {
    if (skip) return;
    assert.ok(existsSync(`${WEB_ROOT}index.html`), `the UI is not built at ${WEB_ROOT}: run npm run build`);
    server = await startTestServer();
    target = createServer((req, res) => {
      if (req.url !== '/favicon.ico') hits.push({ url: req.url ?? '', headers: req.headers });
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>landed</title><p>landed');
    });
    await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: ['--no-sandbox'] });
    ({ address, jwt } = await createAddress(server, { name: 'links' }));
    const html = [
      '<p>Welcome aboard.</p>',
      `<p><a id="confirm" href="${base}/confirm?token=abc&amp;next=%2Fhome">Confirm your account</a></p>`,
      `<p><a id="top" href="${base}/top" target="_top">Open here</a></p>`,
      `<p><a id="self" href="${base}/self" target="_self">Open in the frame</a></p>`,
      `<p><a id="script" href="javascript:parent.document.title='pwned'">Run</a></p>`,
    ].join('\r\n');
    const raw = ['Subject: Please confirm', 'From: Shop <shop@store.example>', `To: ${address}`, 'MIME-Version: 1.0', 'Content-Type: text/html; charset=utf-8', '', html, ''].join('\r\n');
    await sendMail(server.smtpPort, { to: [address], message: raw });
  });
  after(async () => {
    await browser?.close();
    await new Promise((r) => (target ? target.close(r) : r(undefined)));
    await server?.close();
  });

  /** A fresh tab on the inbox with the mail open; returns its context, page and the mail's frame. */
  async function openMail(): Promise<{ context: BrowserContext; page: Page; frame: ReturnType<Page['frameLocator']> }> {
    const context = await browser.newContext();
    const page = await context.newPage();
    await openInboxLink(page, server.httpUrl, jwt);
    await page.locator('.list li').filter({ hasText: 'Please confirm' }).locator('.item').click();
    const frame = page.frameLocator('iframe.html');
    await frame.getByText('Welcome aboard.').waitFor();
    return { context, page, frame };
  }

  it('shows each link as the mail wrote it, in a frame whose links open in a new tab, on a page that sends no Referer', { skip }, async () => {
    const { context, page, frame } = await openMail();
    try {
      const links = await frame.locator('a').evaluateAll((as) => as.map((a) => ({ id: a.id, text: a.textContent, href: a.getAttribute('href'), target: a.getAttribute('target') })));
      assert.deepEqual(links, [
        { id: 'confirm', text: 'Confirm your account', href: `${base}/confirm?token=abc&next=%2Fhome`, target: null },
        { id: 'top', text: 'Open here', href: `${base}/top`, target: '_top' },
        { id: 'self', text: 'Open in the frame', href: `${base}/self`, target: '_self' },
        { id: 'script', text: 'Run', href: "javascript:parent.document.title='pwned'", target: null },
      ]);
      // A link without a target of its own takes the document's: a new tab.
      assert.deepEqual(await frame.locator('base').evaluateAll((bs) => bs.map((b) => b.getAttribute('target'))), ['_blank']);
      assert.equal(await frame.locator('#confirm').evaluate((a) => (a as HTMLAnchorElement).target || (document.querySelector('base')?.target ?? '')), '_blank');
      // No script, no same origin, no navigating the app's tab; new tabs leave the sandbox.
      assert.equal(await page.locator('iframe.html').getAttribute('sandbox'), 'allow-popups allow-popups-to-escape-sandbox');
      const served = await context.request.get(server.httpUrl);
      assert.equal(served.headers()['referrer-policy'], 'no-referrer');
    } finally {
      await context.close();
    }
  });

  it('clicking a link opens a new tab at exactly its href, with no Referer and no window.opener; the inbox stays', { skip }, async () => {
    const { context, page, frame } = await openMail();
    try {
      const before = hits.length;
      const [tab] = await Promise.all([context.waitForEvent('page'), frame.locator('#confirm').click()]);
      await tab.waitForLoadState();
      assert.equal(tab.url(), `${base}/confirm?token=abc&next=%2Fhome`);
      assert.equal(await tab.title(), 'landed');
      assert.equal(await tab.evaluate(() => window.opener), null, 'the new tab cannot reach back to the inbox');
      assert.deepEqual(
        hits.slice(before).map((h) => [h.url, h.headers['referer']]),
        [['/confirm?token=abc&next=%2Fhome', undefined]],
        'one request, without a Referer',
      );
      assert.equal(page.url(), `${server.httpUrl}/`);
      assert.equal(context.pages().length, 2);
    } finally {
      await context.close();
    }
  });

  for (const [id, what] of [
    ['top', 'a link that targets the app\'s own tab (_top)'],
    ['self', 'a link that targets the frame itself (_self)'],
    ['script', 'a javascript: link'],
  ] as const) {
    it(`${what} goes nowhere: no request, no new tab, the inbox page unchanged`, { skip }, async () => {
      const { context, page, frame } = await openMail();
      try {
        const before = hits.length;
        const title = await page.title();
        const expected = [`${server.httpUrl}/`];
        if (id === 'self') {
          // The frame's navigation is refused by the page's CSP (frame-src 'self') before any
          // request is made; Chromium reports the refusal, and that report is the signal.
          const refused = page.waitForEvent('console', (m) => /frame-src 'self'.*The request has been blocked/s.test(m.text()));
          await frame.locator(`#${id}`).click();
          await refused;
        } else {
          await frame.locator(`#${id}`).click();
          // A barrier, not a pause: the next click, on a link that works, opens a tab whose page
          // is served by the link target. Whatever the first click started, it started before
          // that click was handled, so by the time the tab has loaded it has reached the target
          // (had the first click navigated the app or the frame, the second finds no link).
          const [tab] = await Promise.all([context.waitForEvent('page'), frame.locator('#confirm').click({ timeout: 10_000 })]);
          await tab.waitForLoadState();
          expected.push(`${base}/confirm?token=abc&next=%2Fhome`);
        }
        const reached = hits.slice(before).map((h) => h.url);
        assert.deepEqual(reached, expected.slice(1).map((u) => u.slice(base.length)), 'nothing but the barrier reached the link target');
        assert.deepEqual(context.pages().map((p) => p.url()), expected, 'no tab but the barrier\'s');
        assert.equal(await page.title(), title);
        assert.equal(await page.getByRole('heading', { name: 'Please confirm' }).count(), 1, 'the mail is still shown');
      } finally {
        await context.close();
      }
    });
  }
});
