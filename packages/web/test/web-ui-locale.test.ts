// Dates, relative times and sizes in the browser's locale (Chromium with de-DE and
// en-US, in Europe/Berlin): the list says when a mail came ("jetzt" / "now" within the
// minute, the date and time for a mail of two days ago), the header panel gives the
// mail's Date with its time zone, and an attachment's size has the locale's decimal sign.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chromium, type Browser } from 'playwright-core';
import { createAddress, sendMail, startTestServer, testClock, type TestServer } from '../../server/test/helpers/harness.js';
import { CHROMIUM_PATH, serviceAvailable } from '../../server/test/helpers/services.js';
import { openInboxLink } from '../../server/test/helpers/chromium.js';

const ready = serviceAvailable('chromium');

const DAY = 24 * 3600 * 1000;

const mail = (to: string, subject: string) =>
  [
    `Subject: ${subject}`,
    'From: Shop <shop@store.example>',
    `To: ${to}`,
    'Date: Thu, 05 Mar 2026 14:07:09 +0000',
    'Content-Type: multipart/mixed; boundary="mix"',
    '',
    '--mix',
    'Content-Type: text/plain; charset=utf-8',
    '',
    'Hello.',
    '--mix',
    'Content-Type: application/octet-stream; name="data.bin"',
    'Content-Disposition: attachment; filename="data.bin"',
    'Content-Transfer-Encoding: base64',
    '',
    Buffer.alloc(12_500, 7).toString('base64'),
    '--mix--',
    '',
  ].join('\r\n');

describe('web UI: dates and sizes in the browser locale', { skip: !ready && 'Chromium is not installed', timeout: 120_000 }, () => {
  let server: TestServer;
  let browser: Browser;
  const clock = testClock(Date.now() - 2 * DAY);
  let jwt = '';
  let twoDaysAgo = 0;

  before(async () => {
    server = await startTestServer({}, undefined, undefined, { now: clock.now });
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: ['--no-sandbox'] });
    // One mail delivered two days ago (the service's clock), one now.
    const made = await createAddress(server, { name: 'ui-locale' });
    jwt = made.jwt;
    twoDaysAgo = clock.now();
    await sendMail(server.smtpPort, { to: [made.address], message: mail(made.address, 'Older') });
    clock.set(Date.now());
    await sendMail(server.smtpPort, { to: [made.address], message: mail(made.address, 'Newer') });
    // A mail stamped 45 s ahead of the browser's clock, as when the page's clock (moved every
    // 30 s) or the browser's lags the server's: still "now", not a clock time that looks later.
    clock.set(Date.now() + 45_000);
    await sendMail(server.smtpPort, { to: [made.address], message: mail(made.address, 'Ahead') });
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  const cases = [
    { locale: 'de-DE', now: 'jetzt', bytes: '12,5 kB', date: /^\d{2}\.\d{2}\.\d{4}, \d{2}:\d{2}$/, header: '05.03.2026, 15:07:09 MEZ' },
    { locale: 'en-US', now: 'now', bytes: '12.5 kB', date: /^[A-Z][a-z]{2} \d{1,2}, \d{4}, \d{1,2}:\d{2}\s[AP]M$/, header: 'Mar 5, 2026, 3:07:09\u202fPM GMT+1' },
  ];
  for (const c of cases) {
    it(`${c.locale}: "${c.now}", the date of older mail, the Date header and sizes as the locale writes them`, async () => {
      const context = await browser.newContext({ locale: c.locale, timezoneId: 'Europe/Berlin' });
      const page = await context.newPage();
      await openInboxLink(page, server.httpUrl, jwt);
      const newer = page.locator('.list li', { hasText: 'Newer' }).locator('time');
      const older = page.locator('.list li', { hasText: 'Older' }).locator('time');
      await newer.waitFor();
      assert.equal(await newer.textContent(), c.now);
      assert.equal(await page.locator('.list li', { hasText: 'Ahead' }).locator('time').textContent(), c.now);
      const olderText = (await older.textContent()) ?? '';
      assert.match(olderText, c.date);
      // The same instant as the test's Intl writes it in that locale and zone (day and month at least).
      const day = new Intl.DateTimeFormat(c.locale, { day: 'numeric', timeZone: 'Europe/Berlin' }).format(twoDaysAgo);
      assert.ok(olderText.includes(day), `${olderText} names day ${day}`);
      assert.equal(await older.getAttribute('datetime'), new Date(twoDaysAgo).toISOString());
      assert.ok((await older.getAttribute('title'))?.length, 'the full date as a tooltip');

      await page.locator('.list .subject', { hasText: 'Older' }).click();
      const dateRow = page.locator('dl.headers div', { has: page.locator('dt', { hasText: 'Date' }) }).locator('dd');
      await dateRow.waitFor();
      assert.equal((await dateRow.textContent())?.replace(/\s/g, ' '), c.header.replace(/\s/g, ' '));
      assert.match((await page.locator('.attachments .muted').textContent()) ?? '', new RegExp(`${c.bytes}$`));
      await context.close();
    });
  }
});
