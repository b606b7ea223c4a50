// Sandboxes in the web UI and the admin page (Chromium, the built pages): the admin creates
// a sandbox; the page opens it by name and password (a wrong one is refused in place); its
// mail shows every envelope recipient in the list and the reader, the Bcc-only one included;
// the admin gives it a new password and deletes it.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import nodemailer from 'nodemailer';
import { chromium, type Browser, type Page } from 'playwright-core';
import { ADMIN_TOKEN } from '../../server/test/helpers/admin.js';
import { request, startTestServer, type TestServer } from '../../server/test/helpers/harness.js';
import { CHROMIUM_PATH, serviceAvailable } from '../../server/test/helpers/services.js';
import { axeViolations } from '../../server/test/helpers/axe.js';

const ready = serviceAvailable('chromium');

describe('web UI: sandboxes', { skip: !ready && 'Chromium is not installed', timeout: 180_000 }, () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  before(async () => {
    server = await startTestServer({ ADMIN_TOKEN });
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: ['--no-sandbox'] });
    page = await browser.newPage();
    page.on('dialog', (d) => void d.accept());
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  it('the admin page creates a sandbox; the inbox page opens it and shows its recipients; a new password, then deletion', async () => {
    await page.goto(`${server.httpUrl}/admin`);
    await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Sandboxes' }).waitFor();
    await page.getByText('No sandbox yet: SMTP offers no AUTH.').waitFor();
    await page.getByLabel('Name (the SMTP login)').fill('web-team');
    await page.getByLabel('Password', { exact: true }).fill('web-pass-1');
    await page.getByRole('button', { name: 'Create sandbox' }).click();
    await page.locator('[role=status]', { hasText: 'Sandbox web-team is ready' }).waitFor();
    await page.getByRole('row', { name: /web-team/ }).waitFor();
    assert.deepEqual(await axeViolations(page), [], 'the admin page with its sandboxes has no accessibility violation');

    await nodemailer
      .createTransport({ host: '127.0.0.1', port: server.smtpPort, secure: false, auth: { user: 'web-team', pass: 'web-pass-1' } })
      .sendMail({ from: 'app@staging.example', to: 'alice@customer.com', bcc: 'hidden@audit.example', subject: 'Welcome Alice', text: 'Your code is 482913' });

    const inbox = await browser.newPage();
    await inbox.goto(server.httpUrl);
    await inbox.getByText('Open a sandbox').click();
    await inbox.getByLabel('Sandbox name (its SMTP login)').fill('web-team');
    await inbox.getByLabel('Password', { exact: true }).fill('wrong');
    await inbox.getByRole('button', { name: 'Open', exact: true }).last().click();
    await inbox.getByText('Wrong sandbox name or password.').waitFor();
    await inbox.getByLabel('Password', { exact: true }).fill('web-pass-1');
    await inbox.getByRole('button', { name: 'Open', exact: true }).last().click();
    const item = inbox.locator('.item', { hasText: 'Welcome Alice' });
    await item.waitFor();
    assert.equal(await item.locator('.recipients').textContent(), 'to alice@customer.com, hidden@audit.example');
    // The page's controls are drawn with the list: a sandbox offers Copy and Forget, never Delete address (only the operator deletes it).
    await inbox.getByRole('button', { name: 'Forget' }).waitFor();
    assert.equal(await inbox.getByRole('button', { name: 'Delete address' }).count(), 0, 'no Delete address for a sandbox');
    await item.click();
    const recipients = inbox.locator('.headers div', { hasText: 'Recipients' });
    await recipients.waitFor();
    assert.equal(await recipients.locator('dd').textContent(), 'alice@customer.com, hidden@audit.example');
    assert.deepEqual(await axeViolations(inbox), [], 'a sandbox open in the page has no accessibility violation');

    // A new password: the old one stops working.
    await page.getByRole('button', { name: 'New password for web-team' }).click();
    await page.getByLabel('New password for web-team').fill('web-pass-2');
    await page.getByRole('button', { name: 'Set' }).click();
    await page.locator('[role=status]', { hasText: 'has a new password' }).waitFor();
    assert.equal((await request(server.httpUrl, '/api/sandbox/token', { method: 'POST', body: { name: 'web-team', password: 'web-pass-1' } })).status, 401);
    assert.equal((await request(server.httpUrl, '/api/sandbox/token', { method: 'POST', body: { name: 'web-team', password: 'web-pass-2' } })).status, 200);

    await page.getByRole('button', { name: 'Delete the sandbox web-team' }).click();
    await page.getByText('No sandbox yet: SMTP offers no AUTH.').waitFor();
    assert.equal(await server.store.findSandbox('web-team'), undefined);
  });
});
