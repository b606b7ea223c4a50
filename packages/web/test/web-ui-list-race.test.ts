// The mail list and the event stream (packages/web/src/stream-ledger.ts): a page of the
// list is the server's list as it was when the page was asked for, and the stream's
// events can arrive before its answer. Here the page's list requests are answered by
// the real server at once but handed to the page only after a mail has arrived over
// the stream (and, in the second case, been deleted; in the third, marked read
// elsewhere): the late answer must not undo it.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { chromium, type APIResponse, type Browser, type Page, type Route } from 'playwright-core';
import { WEB_ROOT } from '../../server/src/http/routes/ui.js';
import { createAddress, message, request, sendMail, startTestServer, until, type TestServer } from '../../server/test/helpers/harness.js';
import { CHROMIUM_PATH, serviceAvailable } from '../../server/test/helpers/services.js';
import { openInboxLink } from '../../server/test/helpers/chromium.js';

const ready = serviceAvailable('chromium');

describe('web UI: a list fetched before a live change does not undo it', { skip: !ready && 'Chromium is not installed', timeout: 120_000 }, () => {
  let server: TestServer;
  let browser: Browser;
  before(async () => {
    assert.ok(existsSync(`${WEB_ROOT}index.html`), `the UI is not built at ${WEB_ROOT}: run npm run build`);
    server = await startTestServer();
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: ['--no-sandbox'] });
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  /**
   * Opens the inbox at `jwt` with the page's n-th list request (1, 2, …) held while
   * `hold(n)`: answered by the server at once, handed to the page on release().
   */
  async function openHeld(jwt: string, hold: (n: number) => boolean): Promise<{ page: Page; held: () => number; release: () => Promise<void> }> {
    const page = await browser.newPage();
    const held: { route: Route; response: APIResponse }[] = [];
    let lists = 0;
    let holding = true;
    await page.route(
      (url) => url.pathname === '/api/mails',
      async (route) => {
        const response = await route.fetch();
        if (holding && hold(++lists)) held.push({ route, response });
        else await route.fulfill({ response });
      },
    );
    await openInboxLink(page, server.httpUrl, jwt);
    return {
      page,
      held: () => held.length,
      async release() {
        holding = false;
        for (const h of held.splice(0)) await h.route.fulfill({ response: h.response });
        // Let the page take the answers in and render.
        await page.evaluate(() => new Promise<void>((r) => setTimeout(r, 200)));
      },
    };
  }

  it('a mail that arrived over the stream while the first list and the catch-up were on their way stays listed', async () => {
    const { address, jwt } = await createAddress(server, { name: 'race-new' });
    const { page, held, release } = await openHeld(jwt, () => true);
    // The stream is open (its catch-up request is held too) before the mail is sent.
    await page.locator('.live.on').waitFor();
    await until('the first list and the catch-up requested', () => held() >= 2);
    await sendMail(server.smtpPort, { to: [address], message: message({ Subject: 'Raced the list' }, 'x') });
    await page.locator('.list .subject', { hasText: 'Raced the list' }).waitFor();
    await release();
    assert.equal(await page.locator('.list .subject', { hasText: 'Raced the list' }).count(), 1, 'still listed once the older answers came');
    assert.equal(await page.title(), '(1) temp-inbox', 'and counted unread');
    await page.close();
  });

  /**
   * An inbox with one mail, `subject`, opened with the first list passing and the
   * catch-up when the stream opens (which lists the mail as it was) held; resolves once
   * the mail is listed, the stream is open and the catch-up was asked for.
   */
  async function withCatchUpHeld(name: string, subject: string) {
    const made = await createAddress(server, { name });
    await sendMail(server.smtpPort, { to: [made.address], message: message({ Subject: subject }, 'x') });
    const listed = await request(server.httpUrl, '/api/mails?limit=10&offset=0', { jwt: made.jwt });
    const uuid = listed.json.results[0].uuid as string;
    const { page, held, release } = await openHeld(made.jwt, (n) => n === 2);
    const item = page.locator('.list li', { hasText: subject }).locator('button.item');
    await item.waitFor();
    await page.locator('.live.on').waitFor();
    await until('the catch-up requested', () => held() === 1);
    return { jwt: made.jwt, uuid, page, item, release };
  }

  it('a mail deleted over the stream while a list was on its way stays gone', async () => {
    const { jwt, uuid, page, item, release } = await withCatchUpHeld('race-gone', 'Soon deleted');
    assert.equal((await request(server.httpUrl, `/api/mails/${uuid}`, { method: 'DELETE', jwt })).status, 200);
    await item.waitFor({ state: 'detached' });
    await release();
    assert.equal(await item.count(), 0, 'the older answer did not bring it back');
    await page.close();
  });

  it('a mail marked read over the stream while a list was on its way stays read', async () => {
    const { jwt, uuid, page, item, release } = await withCatchUpHeld('race-read', 'Read elsewhere');
    assert.equal((await request(server.httpUrl, `/api/mail/${uuid}`, { method: 'PATCH', body: { seen: true }, jwt })).status, 200);
    await page.waitForFunction(() => document.title === 'temp-inbox');
    await release();
    assert.equal((await item.getAttribute('class'))?.split(' ').includes('unread'), false, 'the older answer did not make it unread again');
    assert.equal(await page.title(), 'temp-inbox', 'and it is not counted unread');
    await page.close();
  });
});
