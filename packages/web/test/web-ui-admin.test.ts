// The operators' admin page in a real Chromium (Debian's, driven by playwright-core),
// against the whole service with ADMIN_TOKEN: it asks for the token (a wrong one is
// refused), keeps it for the tab, shows the statistics and the addresses with their
// mail, reads a mail, and blocks a sender domain that SMTP then refuses with 550 5.7.1
// (and accepts again once the block is removed from the page).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { ADMIN_WEB_ROOT } from '../../server/src/http/routes/admin-page.js';
import { ADMIN_TOKEN } from '../../server/test/helpers/admin.js';
import { createAddress, DOMAIN, message, sendMail, SmtpClient, startTestServer, type TestServer } from '../../server/test/helpers/harness.js';
import { CHROMIUM_PATH, serviceAvailable } from '../../server/test/helpers/services.js';

const ready = serviceAvailable('chromium');

describe('admin page in Chromium', { skip: !ready && 'Chromium is not installed', timeout: 120_000 }, () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];

  before(async () => {
    assert.ok(existsSync(`${ADMIN_WEB_ROOT}admin.html`), `the admin page is not built at ${ADMIN_WEB_ROOT}: run npm run build`);
    server = await startTestServer({ ADMIN_TOKEN });
    const first = await createAddress(server, { name: 'ui-admin-first' });
    await createAddress(server, { name: 'ui-admin-second' });
    await sendMail(server.smtpPort, {
      from: 'news@shop.example',
      to: [first.address],
      message: message({ From: 'Shop <news@shop.example>', Subject: 'Your code', 'Message-ID': '<ui-admin@test>' }, 'Your code is 482913.'),
    });
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: ['--no-sandbox'] });
    page = await browser.newPage();
    page.on('pageerror', (err) => pageErrors.push(err.message));
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  /** The reply to MAIL FROM:<sender> over real SMTP. */
  async function mailFrom(sender: string): Promise<string> {
    const smtp = await SmtpClient.connect(server.smtpPort);
    try {
      await smtp.command('EHLO ui.test');
      return (await smtp.command(`MAIL FROM:<${sender}>`)).text.trim();
    } finally {
      await smtp.quit();
    }
  }

  /** The status line's text once it says `text`: it is always on the page, and is filled when the action's answer comes. */
  async function statusOnceItSays(text: string): Promise<string | null> {
    await page.locator('[role=status]', { hasText: text }).waitFor();
    return page.getByRole('status').textContent();
  }

  it('asks for the token, refuses a wrong one, and keeps the right one for the tab only', async () => {
    await page.goto(`${server.httpUrl}/admin`);
    await page.getByRole('heading', { name: 'temp-inbox admin' }).waitFor();
    await page.getByLabel('Admin token').fill(`wrong-${ADMIN_TOKEN}`);
    await page.getByRole('button', { name: 'Sign in' }).click();
    assert.equal(await page.getByRole('alert').textContent(), 'That token was refused.');
    await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Statistics' }).waitFor();
    assert.equal(await page.evaluate(() => sessionStorage.getItem('temp-inbox-admin-token')), ADMIN_TOKEN);
    assert.deepEqual(await page.evaluate(() => [document.cookie, localStorage.length]), ['', 0], 'no cookie, nothing kept beyond the tab');
    // A reload keeps the tab signed in.
    await page.reload();
    await page.getByRole('heading', { name: 'Addresses' }).waitFor();
  });

  it('shows the statistics and the addresses with their mail count, and reads a mail', async () => {
    const storage = page.locator('.storage');
    await storage.getByText('Addresses').waitFor();
    assert.match((await storage.textContent()) ?? '', /Addresses2Live mails1/);
    const senders = page.getByRole('table', { name: /Top senders/ });
    assert.deepEqual(await senders.locator('tbody tr').allInnerTexts(), ['news@shop.example\t1']);
    assert.equal(await page.getByRole('table', { name: /Mails per day/ }).locator('tbody tr').count(), 30);

    const table = page.getByRole('table', { name: /^Addresses 1–2 of 2/ });
    await table.waitFor();
    const rows = table.locator('tbody tr');
    assert.deepEqual(await rows.locator('th').allInnerTexts(), [`ui-admin-second@${DOMAIN}`, `ui-admin-first@${DOMAIN}`]);
    assert.equal(await rows.nth(1).locator('td.num').first().innerText(), '1', 'its one mail');
    assert.equal(await rows.nth(0).locator('td.num').first().innerText(), '0');

    // Searching narrows the list.
    await page.getByLabel('Find addresses containing').fill('FIRST');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('table', { name: /^Addresses 1–1 of 1 containing “FIRST”/ }).waitFor();

    await page.getByRole('button', { name: `Mail of ui-admin-first@${DOMAIN}` }).click();
    await page.getByRole('heading', { name: `Mail of ui-admin-first@${DOMAIN}` }).waitFor();
    await page.getByRole('button', { name: 'Read Your code' }).click();
    await page.getByRole('heading', { name: 'Your code', level: 4 }).waitFor();
    assert.match((await page.getByLabel('Raw message').textContent()) ?? '', /^Received: from [\s\S]*Your code is 482913\./);
    assert.match((await page.locator('.mail dl').textContent()) ?? '', /Shop <news@shop\.example>/);
  });

  it('blocks a sender domain (SMTP then refuses it with 550 5.7.1) and removes the block (accepted again)', async () => {
    assert.match(await mailFrom('promo@spam.example'), /^250 /);
    await page.getByLabel('Block', { exact: true }).selectOption('domain');
    await page.getByLabel('Value').fill('Spam.Example');
    await page.getByLabel('Note (optional)').fill('newsletters nobody asked for');
    await page.getByRole('button', { name: 'Block', exact: true }).click();
    assert.equal(await statusOnceItSays('Blocked spam.example.'), 'Blocked spam.example.');
    const blocks = page.getByRole('table', { name: '1 block, newest first' });
    await blocks.waitFor();
    const row = blocks.locator('tbody tr');
    assert.match(await row.innerText(), /^spam\.example\tSender domain \(and its subdomains\)\tnewsletters nobody asked for\t/);
    assert.match(await mailFrom('promo@spam.example'), /^550 5\.7\.1 /);
    assert.match(await mailFrom('promo@mail.spam.example'), /^550 5\.7\.1 /);

    // A block that is refused says why.
    await page.getByLabel('Block', { exact: true }).selectOption('ip');
    await page.getByLabel('Value').fill('300.1.1.1');
    await page.getByRole('button', { name: 'Block', exact: true }).click();
    assert.match((await page.getByRole('alert').textContent()) ?? '', /^Invalid IP address or CIDR range/);

    await page.getByRole('button', { name: 'Remove the block of spam.example' }).click();
    await page.getByRole('table', { name: 'Nothing is blocked.' }).waitFor();
    assert.equal(await statusOnceItSays('Removed the block of spam.example.'), 'Removed the block of spam.example.');
    assert.equal(await page.getByRole('alert').count(), 0, 'the error is cleared by the next success');
    assert.match(await mailFrom('promo@spam.example'), /^250 /);
  });

  it('creates an address and shows its token, deletes one, and signs out', async () => {
    await page.getByLabel('Name (optional)').fill('ui-admin-made');
    await page.getByRole('button', { name: 'Create address' }).click();
    const token = page.getByLabel(`Token of ui-admin-made@${DOMAIN}`);
    await token.waitFor();
    assert.match(await token.inputValue(), /^eyJ[\w-]+\.[\w-]+\.[\w-]+$/);
    assert.equal(await statusOnceItSays(`Created ui-admin-made@${DOMAIN}.`), `Created ui-admin-made@${DOMAIN}.`);

    await page.getByLabel('Find addresses containing').fill('');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('table', { name: /^Addresses 1–3 of 3/ }).waitFor();
    page.once('dialog', (d) => void d.accept());
    await page.getByRole('button', { name: `Delete ui-admin-second@${DOMAIN}` }).click();
    await page.getByRole('table', { name: /^Addresses 1–2 of 2/ }).waitFor();
    assert.equal(await statusOnceItSays(`Deleted ui-admin-second@${DOMAIN}.`), `Deleted ui-admin-second@${DOMAIN}.`);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Admin token').waitFor();
    assert.equal(await page.evaluate(() => sessionStorage.getItem('temp-inbox-admin-token')), null);
    assert.deepEqual(pageErrors, []);
  });
});
