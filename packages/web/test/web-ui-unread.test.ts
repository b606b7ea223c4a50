// Unread mail in the web UI (Chromium): a mail arrives unread (bold, a dot, "Unread" for
// screen readers) and is counted in the tab's title; opening it marks it read on the
// server (GET /api/mails says so) and in the list, and in another tab of the same inbox
// (the mail_seen event); "Mark as unread" makes it unread again, everywhere.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Locator } from 'playwright-core';
import { createAddress, message, request, sendMail } from '../../server/test/helpers/harness.js';
import { serviceAvailable } from '../../server/test/helpers/services.js';
import { openInboxLink, serverAndBrowser } from '../../server/test/helpers/chromium.js';

const ready = serviceAvailable('chromium');

describe('web UI: unread mail', { skip: !ready && 'Chromium is not installed', timeout: 120_000 }, () => {
  const suite = serverAndBrowser();

  it('arrives unread, is marked read when opened (server and other tabs), and Mark as unread undoes it', async () => {
    const made = await createAddress(suite.server, { name: 'ui-unread' });
    const seenOnServer = async () => {
      const res = await request(suite.server.httpUrl, '/api/mails?limit=10&offset=0', { headers: { authorization: `Bearer ${made.jwt}` } });
      const body = res.json as { results: { seen: boolean; metadata: string }[] };
      return Object.fromEntries(body.results.map((m) => [(JSON.parse(m.metadata) as { subject: string }).subject, m.seen]));
    };
    const context = await suite.browser.newContext();
    const page = await context.newPage();
    const other = await context.newPage();
    // The second tab's link names the inbox the first made active: nothing to ask.
    await openInboxLink(page, suite.server.httpUrl, made.jwt);
    await other.goto(`${suite.server.httpUrl}/#token=${made.jwt}`);
    for (const p of [page, other]) await p.locator('.live.on').waitFor();
    await sendMail(suite.server.smtpPort, { to: [made.address], message: message({ From: 'Shop <shop@store.example>', Subject: 'First' }, 'one') });
    await sendMail(suite.server.smtpPort, { to: [made.address], message: message({ From: 'Shop <shop@store.example>', Subject: 'Second' }, 'two') });

    const row = (p: typeof page, subject: string) => p.locator('.list li', { hasText: subject }).locator('button.item');
    const isUnread = async (item: Locator) => (await item.getAttribute('class'))?.split(' ').includes('unread') ?? false;
    const first = row(page, 'First');
    await row(page, 'Second').waitFor();
    await first.waitFor();
    // Unread: a class for the bold and the dot, the word for screen readers, in the title.
    assert.ok(await isUnread(first));
    assert.match((await first.textContent()) ?? '', /^Unread, Shop/);
    assert.equal(await first.locator('.dot').count(), 1);
    assert.equal(await first.locator('.dot').getAttribute('aria-hidden'), 'true');
    assert.equal(await first.locator('.subject').evaluate((el) => getComputedStyle(el).fontWeight), '700');
    await page.waitForFunction(() => document.title === '(2) temp-inbox');
    assert.deepEqual(await seenOnServer(), { First: false, Second: false });

    // Opened: read on the server, in the list, in the title, and in the other tab.
    await first.click();
    await page.locator('.reader h2', { hasText: 'First' }).waitFor();
    await page.waitForFunction(() => !document.querySelector('.list li.selected .item')?.classList.contains('unread'));
    assert.deepEqual(await seenOnServer(), { First: true, Second: false });
    assert.equal(await first.textContent().then((t) => t?.startsWith('Unread')), false);
    assert.equal(await first.locator('.dot').count(), 0);
    assert.equal(await first.locator('.subject').evaluate((el) => getComputedStyle(el).fontWeight), '400');
    await page.waitForFunction(() => document.title === '(1) temp-inbox');
    await other.waitForFunction(() => document.title === '(1) temp-inbox');
    assert.equal(await isUnread(row(other, 'First')), false, 'the other tab heard mail_seen');
    assert.ok(await isUnread(row(other, 'Second')));

    // Mark as unread: back to the list, unread everywhere again.
    await page.getByRole('button', { name: 'Mark as unread' }).click();
    await page.waitForFunction(() => document.title === '(2) temp-inbox');
    assert.equal(await page.locator('.reader h2').count(), 0, 'the mail is closed');
    assert.ok(await isUnread(first));
    // The keyboard is on that mail in the list.
    await page.waitForFunction(() => document.activeElement?.classList.contains('item'));
    assert.match((await page.evaluate(() => document.activeElement?.textContent)) ?? '', /First/);
    assert.deepEqual(await seenOnServer(), { First: false, Second: false });
    await other.waitForFunction(() => document.title === '(2) temp-inbox');
    assert.ok(await isUnread(row(other, 'First')));

    // Opened again: read again.
    await first.click();
    await page.waitForFunction(() => document.title === '(1) temp-inbox');
    assert.deepEqual(await seenOnServer(), { First: true, Second: false });
    await context.close();
  });
});
