// Accessibility of the web UI in Chromium: axe-core finds no violation of any impact
// in the light and the dark theme on every screen (welcome, the Open an inbox form,
// the empty inbox, the list, search results, a mail in each of its views (the Report's
// sections open too) with its header panel open, the phone layout, the admin page); focus is visible on every
// control reached with Tab; and with prefers-reduced-motion nothing moves.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { BrowserContext, Page } from 'playwright-core';
import { ADMIN_TOKEN } from '../../server/test/helpers/admin.js';
import { axeViolations } from '../../server/test/helpers/axe.js';
import { createAddress, sendMail } from '../../server/test/helpers/harness.js';
import { serviceAvailable } from '../../server/test/helpers/services.js';
import { openInboxLink, serverAndBrowser } from '../../server/test/helpers/chromium.js';

const ready = serviceAvailable('chromium');

const SCHEMES = ['light', 'dark'] as const;

const mail = (to: string, subject: string, html: string) =>
  [
    `Subject: ${subject}`,
    'From: Shop <shop@store.example>',
    `To: ${to}`,
    'Cc: Team <team@store.example>',
    'Message-ID: <a11y@store.example>',
    'Content-Type: multipart/mixed; boundary="mix"',
    '',
    '--mix',
    'Content-Type: multipart/alternative; boundary="alt"',
    '',
    '--alt',
    'Content-Type: text/plain; charset=utf-8',
    '',
    'Your code is 482913. Welcome aboard.',
    '--alt',
    'Content-Type: text/html; charset=utf-8',
    '',
    html,
    '--alt--',
    '--mix',
    'Content-Type: application/pdf; name="invoice.pdf"',
    'Content-Disposition: attachment; filename="invoice.pdf"',
    'Content-Transfer-Encoding: base64',
    '',
    Buffer.from('%PDF-1.4 not really').toString('base64'),
    '--mix--',
    '',
  ].join('\r\n');

describe('web UI accessibility (axe-core, Chromium)', { skip: !ready && 'Chromium is not installed', timeout: 300_000 }, () => {
  const suite = serverAndBrowser({ ADMIN_TOKEN });

  async function contextFor(scheme: 'light' | 'dark', viewport?: { width: number; height: number }): Promise<BrowserContext> {
    const context = await suite.browser.newContext({ colorScheme: scheme, ...(viewport ? { viewport } : {}) });
    await context.grantPermissions(['notifications'], { origin: suite.server.httpUrl });
    return context;
  }

  /** Collects axe's violations on the page under a name, to report them all at once. */
  function collector() {
    const all: string[] = [];
    return {
      async check(page: Page, where: string) {
        // Colours settle before axe reads them: a new mail's highlight fades out first.
        await page.evaluate('Promise.all(document.getAnimations().map((a) => a.finished))');
        for (const v of await axeViolations(page)) all.push(`[${where}] ${v}`);
      },
      assertNone() {
        assert.equal(all.length, 0, `axe found ${all.length} violation(s):\n${all.join('\n')}`);
      },
    };
  }

  for (const scheme of SCHEMES) {
    it(`${scheme} theme: welcome, Open an inbox, empty inbox, list, search, a mail in every view, phone: no violations`, async () => {
      const found = collector();
      const context = await contextFor(scheme);
      const page = await context.newPage();
      await page.goto(suite.server.httpUrl);
      await page.getByText('A disposable inbox').waitFor();
      await found.check(page, 'welcome');
      await page.getByText('Open an inbox').click();
      await page.getByLabel('Token of an inbox made with the API, SDK or CLI').waitFor();
      await found.check(page, 'Open an inbox form');
      await page.getByLabel('Token of an inbox made with the API, SDK or CLI').fill('not-a-token');
      await page.getByRole('button', { name: 'Open', exact: true }).click();
      await page.getByRole('alert').waitFor();
      await found.check(page, 'Open an inbox, refused token');

      const made = await createAddress(suite.server, { name: `a11y-${scheme}` });
      // A new document: only a page load reads the #token= fragment.
      await page.goto('about:blank');
      await openInboxLink(page, suite.server.httpUrl, made.jwt);
      await page.getByText(`Waiting for mail to ${made.address}`).waitFor();
      await page.locator('.live.on').waitFor();
      await found.check(page, 'empty inbox');
      await page.getByRole('button', { name: 'Notify' }).click();
      await page.locator('button.notify[aria-pressed="true"]').waitFor();
      await found.check(page, 'notifications on');

      const html = '<p>Your code is <b>482913</b>.</p><p><img src="https://tracker.example/p.gif" alt=""></p><p><a href="https://app.example/confirm">Confirm</a></p>';
      await sendMail(suite.server.smtpPort, { to: [made.address], message: mail(made.address, 'Welcome aboard', html) });
      await sendMail(suite.server.smtpPort, { to: [made.address], message: mail(made.address, 'Second letter', '<p>Another one.</p>') });
      await page.getByText('2 mails').waitFor();
      await found.check(page, 'list');

      await page.getByLabel('Search this inbox').fill('second');
      await page.getByText('1 found').waitFor();
      await found.check(page, 'search results');
      await page.getByLabel('Search this inbox').fill('zebra');
      await page.getByText('Nothing in this inbox matches').waitFor();
      await found.check(page, 'search, nothing found');
      await page.getByLabel('Search this inbox').fill('');
      await page.getByText('2 mails').waitFor();

      await page.locator('.list .subject', { hasText: 'Welcome aboard' }).click();
      await page.getByText('Remote content blocked.').waitFor();
      await found.check(page, 'mail, HTML view');
      await page.getByText('All headers').click();
      await found.check(page, 'mail, all headers');
      await page.getByRole('tab', { name: 'Text' }).click();
      await page.locator('pre.text').waitFor();
      await found.check(page, 'mail, Text view');
      await page.getByRole('tab', { name: 'Source' }).click();
      await page.locator('pre.raw').waitFor();
      await found.check(page, 'mail, Source view');
      await page.getByRole('tab', { name: 'Report' }).click();
      await page.locator('details.report-section').first().waitFor();
      await found.check(page, 'mail, Report view');
      for (const summary of await page.locator('details.report-section > summary').all()) await summary.click();
      await page.locator('details[data-section="links"] table').waitFor();
      await found.check(page, 'mail, Report view, every section open');
      await page.getByTitle('Copy code 482913').click();
      await found.check(page, 'mail, code copied');
      await context.close();

      const phone = await contextFor(scheme, { width: 360, height: 640 });
      const small = await phone.newPage();
      await openInboxLink(small, suite.server.httpUrl, made.jwt);
      await small.getByText('2 mails').waitFor();
      await found.check(small, 'phone, list');
      await small.locator('.list .subject', { hasText: 'Second letter' }).click();
      await small.getByRole('button', { name: '← Inbox' }).waitFor();
      await found.check(small, 'phone, mail');
      await phone.close();
      found.assertNone();
    });

    it(`${scheme} theme: the admin page (sign-in, refused token, statistics, addresses, a mail, blocks): no violations`, async () => {
      const found = collector();
      const made = await createAddress(suite.server, { name: `a11y-admin-${scheme}` });
      await sendMail(suite.server.smtpPort, { to: [made.address], message: mail(made.address, 'For the admin', '<p>x</p>') });
      const context = await contextFor(scheme);
      const page = await context.newPage();
      await page.goto(`${suite.server.httpUrl}/admin`);
      await page.getByLabel('Admin token').waitFor();
      await found.check(page, 'admin sign-in');
      await page.getByLabel('Admin token').fill(`wrong-${ADMIN_TOKEN}`);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('alert').waitFor();
      await found.check(page, 'admin, token refused');
      await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByText(made.address).waitFor();
      await found.check(page, 'admin, signed in');
      await page.getByRole('button', { name: `Mail of ${made.address}` }).click();
      await page.getByRole('button', { name: 'Read For the admin' }).click();
      await page.getByRole('heading', { name: 'For the admin' }).waitFor();
      await found.check(page, 'admin, a mail');
      await context.close();
      found.assertNone();
    });
  }

  // What the focused element looks like: its name, and whether its focus ring is a
  // solid outline of 2px or more with 3:1 contrast against the background behind it
  // (WCAG 2.4.7 and 1.4.11). A string: the page has no helpers of the test's compiler.
  const FOCUSED = `(() => {
    const el = document.activeElement;
    if (!el || el === document.body) return null;
    if (el.tagName === 'IFRAME') return { name: 'iframe: ' + el.getAttribute('title'), ring: 'inside the frame' };
    const name = (el.getAttribute('aria-label') || (el.labels && el.labels[0] && el.labels[0].textContent) || el.textContent.trim() || el.getAttribute('title') || el.tagName).trim().replace(/\\s+/g, ' ').slice(0, 60);
    const rgb = (c) => (c.match(/[\\d.]+/g) || []).map(Number);
    const lum = ([r, g, b]) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; }; return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); };
    let bg = null;
    for (let p = el.parentElement; p && !bg; p = p.parentElement) { const c = rgb(getComputedStyle(p).backgroundColor); if (c.length === 3 || c[3] === 1) bg = c; }
    if (!bg) bg = rgb(getComputedStyle(document.body).backgroundColor);
    const s = getComputedStyle(el);
    const width = parseFloat(s.outlineWidth);
    const a = lum(rgb(s.outlineColor)), b = lum(bg);
    const contrast = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    const ok = s.outlineStyle !== 'none' && width >= 2 && contrast >= 3;
    return { name, ring: ok ? 'visible' : s.outlineStyle + ' ' + s.outlineWidth + ' contrast ' + contrast.toFixed(2) };
  })()`;

  for (const scheme of SCHEMES) {
    it(`${scheme} theme: Tab reaches every control of the inbox and a mail, each with a visible focus ring`, async () => {
      const made = await createAddress(suite.server, { name: `a11y-focus-${scheme}` });
      await sendMail(suite.server.smtpPort, { to: [made.address], message: mail(made.address, 'Focus me', '<p>Code 482913</p><img src="https://tracker.example/p.gif" alt=""><a href="https://app.example/">A link</a>') });
      const context = await contextFor(scheme);
      const page = await context.newPage();
      await openInboxLink(page, suite.server.httpUrl, made.jwt);
      await page.locator('.list .subject', { hasText: 'Focus me' }).click();
      await page.getByText('Remote content blocked.').waitFor();
      // The mail's frame has its document (on a loaded machine the bar can come first): only then can Tab enter it.
      await page.frameLocator('iframe.html').getByText('Code 482913').waitFor();
      await page.getByText('Open an inbox').click();
      // From the top of the page (a click on the title moves the starting point there), Tab
      // through everything once, up to the mail's frame, whose inside is the sender's. On a
      // loaded machine the frame's document can still be replaced while Tab gets to it (focus
      // then leaves the page): the walk is made again, at most five times in all (three were
      // once not enough on a loaded machine: every walk stopped at the control before the frame).
      let reached: { name: string; ring: string }[] = [];
      for (let walk = 0; walk < 5 && !reached.some((r) => r.ring === 'inside the frame'); walk++) {
        if (walk > 0) await page.waitForTimeout(250);
        await page.frameLocator('iframe.html').getByText('Code 482913').waitFor();
        await page.getByRole('heading', { name: 'temp-inbox' }).click();
        reached = [];
        for (let i = 0; i < 60; i++) {
          await page.keyboard.press('Tab');
          const f = (await page.evaluate(FOCUSED)) as { name: string; ring: string } | null;
          if (!f || (reached.length > 0 && f.name === reached[0]!.name)) break;
          reached.push(f);
          if (f.ring === 'inside the frame') break;
        }
      }
      const names = reached.map((r) => r.name);
      const wanted = ['Active address', 'Copy', 'Delete address', 'Forget', 'Notify', 'Open an inbox', 'Token of an inbox', 'Name (optional)', 'New address', 'Search this inbox', 'Clear', 'Mark as unread', 'All headers', '482913', 'invoice.pdf', 'HTML', 'Load', 'iframe: Message (HTML)'];
      for (const want of wanted) assert.ok(names.some((n) => n.startsWith(want)), `Tab reaches "${want}"; it reached: ${names.join(' | ')}`);
      assert.ok(names.some((n) => n.includes('Focus me')), 'Tab reaches the mail in the list');
      assert.ok(names.includes('Delete'), "Tab reaches the mail's Delete");
      assert.deepEqual(
        reached.filter((r) => r.ring !== 'visible' && r.ring !== 'inside the frame'),
        [],
        'every focused control shows a ring',
      );
      await context.close();
    });
  }

  it('prefers-reduced-motion: a new mail is highlighted by a fade, which does not run when reduced motion is asked for', async () => {
    for (const reducedMotion of ['no-preference', 'reduce'] as const) {
      const made = await createAddress(suite.server, { name: `a11y-motion-${reducedMotion}` });
      const context = await suite.browser.newContext({ reducedMotion });
      const page = await context.newPage();
      await openInboxLink(page, suite.server.httpUrl, made.jwt);
      await page.locator('.live.on').waitFor();
      await page.evaluate("window.started = []; document.addEventListener('animationstart', (e) => window.started.push(e.animationName)); document.addEventListener('transitionstart', (e) => window.started.push(e.propertyName))");
      await sendMail(suite.server.smtpPort, { to: [made.address], message: mail(made.address, 'Moving?', '<p>x</p>') });
      const item = page.locator('.list li', { hasText: 'Moving?' });
      await item.waitFor();
      // Two frames: an animation of the new row has started by then.
      await page.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))');
      const animation = await item.evaluate((li) => getComputedStyle(li).animationName);
      const started = (await page.evaluate('window.started')) as string[];
      if (reducedMotion === 'reduce') {
        assert.equal(animation, 'none');
        assert.deepEqual(started, [], 'nothing moves');
        assert.equal(await page.evaluate('getComputedStyle(document.documentElement).scrollBehavior'), 'auto');
      } else {
        assert.equal(animation, 'arrived');
        assert.ok(started.includes('arrived'), `the fade ran: ${started.join(', ')}`);
      }
      await context.close();
    }
  });
});
