// Desktop notifications in Chromium, with the notifications permission granted: the page
// never asks for permission on load, only when Notify is pressed; then a mail that
// arrives while the tab is hidden is shown with its sender and subject (never its text),
// none while the tab is looked at; a click on it opens the mail; the choice survives a
// reload (localStorage), and Notify pressed again turns it off. The browser's
// Notification is wrapped by an init script that records what the page asks of it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { createAddress, message, sendMail } from '../../server/test/helpers/harness.js';
import { serviceAvailable } from '../../server/test/helpers/services.js';
import { openInboxLink, serverAndBrowser } from '../../server/test/helpers/chromium.js';

const ready = serviceAvailable('chromium');

// Records every `new Notification(title, options)` and requestPermission() call, then
// hands them to the browser's own Notification.
const RECORDER = `(() => {
  const Real = window.Notification;
  const seen = { created: [], instances: [], asked: 0 };
  window.__notify = seen;
  class Recorded extends Real {
    constructor(title, options) {
      seen.created.push({ title, body: options && options.body, tag: options && options.tag });
      super(title, options);
      seen.instances.push(this);
    }
    static get permission() { return Real.permission; }
    static requestPermission(...args) { seen.asked++; return Real.requestPermission(...args); }
  }
  window.Notification = Recorded;
})();`;

interface Recorded {
  created: { title: string; body?: string; tag?: string }[];
  asked: number;
}

const recorded = (page: Page) => page.evaluate('({ created: window.__notify.created, asked: window.__notify.asked })') as Promise<Recorded>;
const setHidden = (page: Page, hidden: boolean) =>
  page.evaluate(`Object.defineProperty(document, 'hidden', { configurable: true, value: ${hidden} }); document.dispatchEvent(new Event('visibilitychange'))`);

describe('web UI: desktop notifications', { skip: !ready && 'Chromium is not installed', timeout: 120_000 }, () => {
  const suite = serverAndBrowser();

  it('asks only on Notify, notifies hidden tabs with sender and subject, opens the mail on click, remembers the choice', async () => {
    const made = await createAddress(suite.server, { name: 'ui-notify' });
    const context = await suite.browser.newContext();
    await context.grantPermissions(['notifications'], { origin: suite.server.httpUrl });
    await context.addInitScript(RECORDER);
    const page = await context.newPage();
    await openInboxLink(page, suite.server.httpUrl, made.jwt);
    await page.locator('.live.on').waitFor();
    const bell = page.getByRole('button', { name: 'Notify' });
    assert.equal(await bell.getAttribute('aria-pressed'), 'false');

    // Not asked for: a mail while hidden shows nothing, and nothing asked the browser.
    await setHidden(page, true);
    await sendMail(suite.server.smtpPort, { to: [made.address], message: message({ From: 'Shop <shop@store.example>', Subject: 'Before asking' }, 'x') });
    await page.locator('.list li', { hasText: 'Before asking' }).waitFor();
    assert.deepEqual(await recorded(page), { created: [], asked: 0 });
    await setHidden(page, false);

    await bell.click();
    await page.waitForFunction(() => document.querySelector('button.notify')?.getAttribute('aria-pressed') === 'true');
    assert.equal((await recorded(page)).asked, 1, 'asked once, on the click');
    assert.equal(await page.evaluate("localStorage.getItem('temp-inbox.notifications')"), 'on');

    // Looked at: no notification.
    await sendMail(suite.server.smtpPort, { to: [made.address], message: message({ From: 'Shop <shop@store.example>', Subject: 'While looking' }, 'x') });
    await page.locator('.list li', { hasText: 'While looking' }).waitFor();
    assert.deepEqual((await recorded(page)).created, []);

    // Hidden: one, with the sender and the subject, not the text.
    await setHidden(page, true);
    await sendMail(suite.server.smtpPort, { to: [made.address], message: message({ From: 'Shop <shop@store.example>', Subject: 'Your code' }, 'The secret text 482913') });
    // A function, not a string: a string predicate that must be polled is evaluated with
    // eval, which the page's Content-Security-Policy refuses (it passed only when the
    // notification was already there at the first look).
    await page.waitForFunction(() => (window as unknown as { __notify: Recorded }).__notify.created.length === 1);
    const [shown] = (await recorded(page)).created;
    assert.equal(shown!.title, 'Shop');
    assert.equal(shown!.body, 'Your code');
    assert.ok(!JSON.stringify(shown).includes('482913'), 'no mail text in the notification');
    assert.match(shown!.tag ?? '', /^[0-9a-f-]{36}$/, 'tagged by the mail');

    // A click on it brings the tab forward and opens the mail.
    await setHidden(page, false);
    assert.equal(await page.locator('.reader h2').count(), 0);
    await page.evaluate("window.__notify.instances[0].dispatchEvent(new Event('click'))");
    await page.locator('.reader h2', { hasText: 'Your code' }).waitFor();

    // The choice is remembered, and still nothing is asked on load.
    await page.reload();
    await page.locator('.live.on').waitFor();
    assert.equal(await bell.getAttribute('aria-pressed'), 'true');
    assert.deepEqual(await recorded(page), { created: [], asked: 0 });

    // Pressed again: off, kept off, and a hidden tab gets nothing.
    await bell.click();
    await page.waitForFunction(() => document.querySelector('button.notify')?.getAttribute('aria-pressed') === 'false');
    assert.equal(await page.evaluate("localStorage.getItem('temp-inbox.notifications')"), 'off');
    await setHidden(page, true);
    await sendMail(suite.server.smtpPort, { to: [made.address], message: message({ From: 'Shop <shop@store.example>', Subject: 'After turning off' }, 'x') });
    await page.locator('.list li', { hasText: 'After turning off' }).waitFor();
    assert.deepEqual(await recorded(page), { created: [], asked: 0 });
    await context.close();
  });

  it('a browser that refuses says how to allow it, and the toggle stays off', async () => {
    const made = await createAddress(suite.server, { name: 'ui-notify-denied' });
    // No grant: headless Chromium answers the request "denied", as a person pressing Block does.
    const context = await suite.browser.newContext();
    await context.addInitScript(RECORDER);
    const page = await context.newPage();
    await openInboxLink(page, suite.server.httpUrl, made.jwt);
    await page.locator('.live.on').waitFor();
    await page.getByRole('button', { name: 'Notify' }).click();
    await page.getByRole('alert').filter({ hasText: 'Notifications are blocked for this site' }).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Notify' }).getAttribute('aria-pressed'), 'false');
    assert.notEqual(await page.evaluate("localStorage.getItem('temp-inbox.notifications')"), 'on');
    await context.close();
  });
});
