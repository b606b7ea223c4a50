// The address's webhook in the web UI (Chromium), against a real receiver: set it (the
// signing secret shown once, and the receiver verifies a mail's POST with it), see the
// attempt listed, a refused URL's plain-text reason shown in place, another address of the
// session showing its own (none), and removal.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createAddress, message, request, sendMail } from '../../server/test/helpers/harness.js';
import { serviceAvailable } from '../../server/test/helpers/services.js';
import { openInboxLink, serverAndBrowser } from '../../server/test/helpers/chromium.js';
import { axeViolations } from '../../server/test/helpers/axe.js';
import { startReceiver } from '../../server/test/helpers/webhook-receiver.js';

const ready = serviceAvailable('chromium');

describe('web UI: the address webhook', { skip: !ready && 'Chromium is not installed', timeout: 120_000 }, () => {
  // The receiver listens on loopback, which webhooks may reach only when the operator allows it.
  const suite = serverAndBrowser({ WEBHOOK_ALLOW_PRIVATE: 'true' });
  const receiver = startReceiver();
  after(async () => (await receiver).stop());

  it('sets a webhook, shows its secret once, lists the delivery of a mail, and removes it', async () => {
    const r = await receiver;
    const made = await createAddress(suite.server, { name: 'ui-hook' });
    const page = await suite.browser.newPage();
    page.on('dialog', (d) => void d.accept());
    await page.goto(`${suite.server.httpUrl}/#token=${made.jwt}`);
    await page.getByText('Webhook', { exact: true }).click();
    await page.getByText('No webhook yet.').waitFor();

    // A refused URL: the server's sentence, in place; nothing set.
    const field = page.getByLabel('Webhook URL');
    await field.fill('http://169.254.169.254/latest/meta-data');
    await page.getByRole('button', { name: 'Set webhook' }).click();
    const refusal = page.locator('.webhook .error');
    await refusal.waitFor();
    assert.match((await refusal.textContent()) ?? '', /link-local/);
    assert.equal((await request(suite.server.httpUrl, '/api/webhook', { jwt: made.jwt })).status, 404);

    await field.fill(r.url());
    await page.getByRole('button', { name: 'Set webhook' }).click();
    const secret = page.locator('.webhook-secret .secret');
    await secret.waitFor();
    const shown = ((await secret.textContent()) ?? '').replace(/Copied$/, '').trim();
    assert.match(shown, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.equal(await page.locator('.webhook-current code').textContent(), r.url());
    assert.deepEqual(await axeViolations(page), [], 'the open panel, with its secret, has no accessibility violation');
    await page.emulateMedia({ colorScheme: 'dark' });
    assert.deepEqual(await axeViolations(page), [], 'nor in the dark theme');
    await page.emulateMedia({ colorScheme: 'light' });

    // The secret on the page is the one the mail's POST is signed with.
    r.secret = shown;
    await sendMail(suite.server.smtpPort, { to: [made.address], message: message({ Subject: 'Hooked' }, 'Your code is 482913') });
    const [post] = await r.untilPosts(1);
    assert.equal(post!.verified, true, 'the receiver verified the POST with the secret the page showed');
    assert.equal(post!.event.data.address, made.address);

    // The attempt, once recorded, after a refresh.
    const deadline = Date.now() + 10_000;
    const item = page.locator('.webhook-deliveries li');
    while ((await item.count()) === 0 && Date.now() < deadline) {
      await page.getByRole('button', { name: 'Refresh' }).click();
      await page.waitForTimeout(100);
    }
    assert.match((await item.first().textContent()) ?? '', /Delivered\s*HTTP 200.*attempt 1/);

    // Closed and opened again: read afresh, and the secret is not shown any more.
    await page.getByText('Webhook', { exact: true }).click();
    await page.getByText('Webhook', { exact: true }).click();
    await page.locator('.webhook-current code').waitFor();
    assert.equal(await secret.count(), 0, 'the secret is shown only right after it was made');

    await page.getByRole('button', { name: 'Remove webhook' }).click();
    await page.getByText('No webhook yet.').waitFor();
    assert.equal((await request(suite.server.httpUrl, '/api/webhook', { jwt: made.jwt })).status, 404, 'removed on the server');
    await page.close();
  });

  it("another address of the session shows its own webhook, not the first one's", async () => {
    const r = await receiver;
    const page = await suite.browser.newPage();
    const first = await createAddress(suite.server, { name: 'ui-hook-a' });
    const put = await request(suite.server.httpUrl, '/api/webhook', { method: 'PUT', jwt: first.jwt, body: { url: r.url('/a') } });
    assert.equal(put.status, 200, put.text);
    const second = await createAddress(suite.server, { name: 'ui-hook-b' });
    await openInboxLink(page, suite.server.httpUrl, first.jwt);
    await page.getByText('Webhook', { exact: true }).click();
    await page.locator('.webhook-current code', { hasText: r.url('/a') }).waitFor();
    // The second address opened in the same browser session becomes the active one (a
    // new hash alone is no new page load: a new document takes the token).
    await page.goto('about:blank');
    await openInboxLink(page, suite.server.httpUrl, second.jwt);
    await page.getByLabel('Active address').locator('option', { hasText: second.address }).waitFor({ state: 'attached' });
    assert.equal(await page.getByLabel('Active address').inputValue(), second.address);
    await page.getByText('Webhook', { exact: true }).click();
    await page.getByText('No webhook yet.').waitFor();
    assert.equal(await page.locator('.webhook-current').count(), 0);
    // Switched back: the panel starts closed and reads the first address's webhook again.
    await page.getByLabel('Active address').selectOption(first.address);
    await page.getByText('Webhook', { exact: true }).click();
    await page.locator('.webhook-current code', { hasText: r.url('/a') }).waitFor();
    await page.close();
  });
});
