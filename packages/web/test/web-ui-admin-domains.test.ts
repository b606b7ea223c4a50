// The admin page's Domains and Refusals views in a real Chromium (Debian's, driven by
// playwright-core), against the whole service with ADMIN_TOKEN: the pool with each domain's
// figures (addresses, mails, top sending domains) as the service counted them over SMTP,
// a domain added and disabled from the page (the public list of domains follows), and the
// refusals by reason over time, with the unknown recipient SMTP refused.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { ADMIN_WEB_ROOT } from '../../server/src/http/routes/admin-page.js';
import { ADMIN_TOKEN, adminRequest } from '../../server/test/helpers/admin.js';
import { axeViolations } from '../../server/test/helpers/axe.js';
import { createAddress, DOMAIN, message, request, sendMail, SmtpClient, startTestServer, type TestServer } from '../../server/test/helpers/harness.js';
import { CHROMIUM_PATH, serviceAvailable } from '../../server/test/helpers/services.js';

const ready = serviceAvailable('chromium');

describe('admin page in Chromium: domains and refusals', { skip: !ready && 'Chromium is not installed', timeout: 120_000 }, () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];

  before(async () => {
    assert.ok(existsSync(`${ADMIN_WEB_ROOT}admin.html`), `the admin page is not built at ${ADMIN_WEB_ROOT}: run npm run build`);
    server = await startTestServer({ ADMIN_TOKEN });
    const a = await createAddress(server, { name: 'ui-domains' });
    for (const from of ['news@shop.example', 'deals@shop.example', 'hello@other.example']) {
      await sendMail(server.smtpPort, { from, to: [a.address], message: message({ Subject: 'Hi' }, 'x') });
    }
    // One recipient SMTP refuses: counted under unknown_recipient before the 550 is sent.
    const smtp = await SmtpClient.connect(server.smtpPort);
    await smtp.command('EHLO ui.test');
    await smtp.command('MAIL FROM:<x@shop.example>');
    assert.equal((await smtp.command(`RCPT TO:<nobody-here@${DOMAIN}>`)).code, 550);
    await smtp.quit();
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: ['--no-sandbox'] });
    page = await browser.newPage();
    page.on('pageerror', (err) => pageErrors.push(err.message));
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  it('signs in and shows the pool with its figures', async () => {
    await page.goto(`${server.httpUrl}/admin`);
    await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Domains' }).waitFor();
    const table = page.getByRole('table', { name: /^1 domain$/ });
    await table.waitFor();
    const row = table.locator('tbody tr', { has: page.getByRole('rowheader', { name: DOMAIN }) });
    // Domain, state, addresses, mails of 24 h and 7 days, refused (1 refusal over it and 3 mails), top sending domains.
    const cells = await row.locator('td').allInnerTexts();
    assert.deepEqual(cells.slice(0, 6), ['Active', '1', '3', '3', '25.0 %', 'shop.example 2, other.example 1']);
  });

  it('adds a domain and disables it from the page; the public list of domains follows', async () => {
    await page.getByLabel('Domain', { exact: true }).fill('Fresh.Example');
    await page.getByRole('button', { name: 'Add domain' }).click();
    await page.locator('[role=status]', { hasText: 'Added fresh.example to the pool.' }).waitFor();
    await page.getByRole('table', { name: '2 domains' }).waitFor();
    assert.ok(((await request(server.httpUrl, '/api/domains')).json.domains as string[]).includes('fresh.example'), 'new addresses can take it');

    await page.getByRole('button', { name: 'Disable fresh.example' }).click();
    await page.locator('[role=status]', { hasText: 'fresh.example is disabled.' }).waitFor();
    const row = page.locator('tbody tr', { has: page.getByRole('rowheader', { name: 'fresh.example' }) });
    await row.getByText('Disabled', { exact: true }).waitFor();
    assert.ok(!((await request(server.httpUrl, '/api/domains')).json.domains as string[]).includes('fresh.example'), 'a disabled domain takes no new addresses');

    await page.getByRole('button', { name: `Check DNS of ${DOMAIN}` }).click();
    await page.getByRole('region', { name: `DNS check of ${DOMAIN}` }).waitFor();
    assert.deepEqual(await axeViolations(page), [], 'the page with its domains and a DNS check has no accessibility violation');
  });

  it('shows the refusals by reason over time', async () => {
    // A node's own read writes its refusal counts first: the one refusal is there at once.
    const res = await adminRequest(server, '/api/admin/refusals?hours=24');
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.totals.unknown_recipient, 1, res.text);
    await page.locator('#refusals').getByRole('button', { name: 'Refresh' }).click();
    const totals = page.getByRole('table', { name: 'Refusals by reason' });
    await totals.locator('tbody tr', { hasText: 'unknown_recipient' }).getByText('1', { exact: true }).waitFor();
    const hours = page.getByRole('table', { name: /^Refusals per hour, newest first \(1 in all\)$/ });
    await hours.waitFor();
    assert.deepEqual(await hours.locator('thead th').allInnerTexts(), ['Hour', 'unknown_recipient', 'All', 'Compared with the busiest hour']);
    assert.equal(await hours.locator('tbody tr').count(), 1);
    await page.getByLabel('Window').selectOption('168');
    await page.getByRole('table', { name: /\(1 in all\)/ }).waitFor();
    assert.deepEqual(await axeViolations(page), [], 'the page with its refusals has no accessibility violation');
    assert.deepEqual(pageErrors, []);
  });
});
