// The authentication verdicts in the mail view (Chromium): SPF, DKIM (per signature,
// with its domain), DMARC and ARC as badges in a list named "Authentication", each
// saying its result in words (colour only repeats it) with its meaning as a tooltip;
// no axe violation. A DNS server started here serves the sender's records, and the
// mail is signed with a test key, as in mail-auth.test.ts.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { dkimSign } from 'mailauth';
import { chromium, type Browser } from 'playwright-core';
import { assertNoViolations } from '../../server/test/helpers/axe.js';
import { startTestDns, type TestDns } from '../../server/test/helpers/dns-server.js';
import { createAddress, sendMail, startTestServer, type TestServer } from '../../server/test/helpers/harness.js';
import { CHROMIUM_PATH, serviceAvailable } from '../../server/test/helpers/services.js';
import { openInboxLink } from '../../server/test/helpers/chromium.js';

const ready = serviceAvailable('chromium');

const keys = generateKeyPairSync('rsa', { modulusLength: 2048 });

async function signedMail(to: string, subject: string, body: string): Promise<string> {
  const message = ['From: Shop <orders@shop.test>', `To: ${to}`, `Subject: ${subject}`, 'Date: Tue, 24 Nov 2026 10:00:00 +0000', 'Content-Type: text/plain', '', body, ''].join('\r\n');
  // mailauth's types describe one signature's options; it takes a list (signatureData).
  // signTime: one reading of the clock for the t= signed and written (see mail-auth.test.ts's signed()).
  const options = { signTime: new Date(), signatureData: [{ signingDomain: 'shop.test', selector: 'sel', privateKey: keys.privateKey.export({ type: 'pkcs8', format: 'pem' }) }] };
  const { signatures } = await dkimSign(Buffer.from(message), options as never);
  return signatures + message;
}

describe('web UI: authentication badges', { skip: !ready && 'Chromium is not installed', timeout: 180_000 }, () => {
  let dns: TestDns;
  let server: TestServer;
  let browser: Browser;
  before(async () => {
    dns = await startTestDns();
    dns.zone.set('shop.test', { TXT: ['v=spf1 ip4:127.0.0.1 -all'] });
    dns.zone.set('sel._domainkey.shop.test', { TXT: [`v=DKIM1; k=rsa; p=${keys.publicKey.export({ type: 'spki', format: 'der' }).toString('base64')}`] });
    dns.zone.set('_dmarc.shop.test', { TXT: ['v=DMARC1; p=reject'] });
    server = await startTestServer({ DNS_SERVERS: dns.server });
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: ['--no-sandbox'] });
  });
  after(async () => {
    await browser?.close();
    await server?.close();
    await dns?.close();
  });

  it('shows each verdict as a named badge with its result in words, and a failed signature as failed', async () => {
    const made = await createAddress(server, { name: 'ui-auth' });
    await sendMail(server.smtpPort, { from: 'orders@shop.test', to: [made.address], message: await signedMail(made.address, 'Order confirmed', 'Your order 1001 is on its way.') });
    const altered = (await signedMail(made.address, 'Order changed', 'Pay 10 EUR.')).replace('Pay 10 EUR.', 'Pay 99 EUR.');
    await sendMail(server.smtpPort, { from: 'orders@shop.test', to: [made.address], message: altered });

    const page = await browser.newPage();
    await openInboxLink(page, server.httpUrl, made.jwt);
    await page.locator('.list .subject', { hasText: 'Order confirmed' }).click();
    const badges = page.getByRole('list', { name: 'Authentication' }).getByRole('listitem');
    await badges.first().waitFor();
    // The mark (✓, ✗, –) is hidden from screen readers; the words are what is read.
    assert.deepEqual(
      (await badges.allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').trim()),
      ['✓ SPF pass', '✓ DKIM pass (shop.test)', '✓ DMARC pass', '– ARC none'],
    );
    assert.equal(await badges.first().getAttribute('title'), 'Verified');
    assert.equal(await badges.first().locator('[aria-hidden="true"]').textContent(), '✓');
    await assertNoViolations(page, 'with a verified mail open');

    await page.locator('.list .subject', { hasText: 'Order changed' }).click();
    await page.getByRole('heading', { name: 'Order changed' }).waitFor();
    const dkim = page.getByRole('list', { name: 'Authentication' }).getByRole('listitem').filter({ hasText: 'DKIM' });
    assert.equal((await dkim.innerText()).replace(/\s+/g, ' ').trim(), '✗ DKIM fail (shop.test)');
    assert.match((await dkim.getAttribute('title')) ?? '', /failed/);
    // SPF still passes (the client is allowed), so DMARC does too, on the aligned SPF.
    assert.equal(await page.getByRole('list', { name: 'Authentication' }).getByRole('listitem').filter({ hasText: 'DMARC' }).innerText().then((t) => t.replace(/\s+/g, ' ').trim()), '✓ DMARC pass');
    // A colour different from a passing badge's, beside the different word.
    const colour = (text: string) => page.locator('.auth-badge', { hasText: text }).evaluate((el) => getComputedStyle(el).color);
    assert.notEqual(await colour('DKIM'), await colour('SPF'));
    await assertNoViolations(page, 'with a failed signature open');
    await page.close();
  });
});
