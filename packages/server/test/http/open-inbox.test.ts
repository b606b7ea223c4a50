// Opening an inbox made elsewhere (API, SDK, CLI) in a browser: POST /api/open_address
// over HTTP, and `/#token=<jwt>` links and the "Open an inbox" form in Chromium.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CookieJar, createAddress, DOMAIN, message, request, sendMail, serversStoppedAfter } from '../helpers/harness.js';
import { serviceAvailable } from '../helpers/services.js';
import { openInboxLink, serverAndBrowser } from '../helpers/chromium.js';

const start = serversStoppedAfter();

describe('POST /api/open_address', () => {
  it('adds the address of a valid token to the session (a new one when there is none) and makes it active', async () => {
    const server = await start();
    const made = await createAddress(server, { name: 'made-by-sdk' });
    const jar = new CookieJar();
    const opened = await request(server.httpUrl, '/api/open_address', { method: 'POST', body: { jwt: made.jwt }, jar });
    assert.equal(opened.status, 200, opened.text);
    assert.deepEqual(opened.json, { success: true, address: `made-by-sdk@${DOMAIN}` });
    const listing = await request(server.httpUrl, '/api/session/addresses', { jar });
    assert.equal(listing.json.activeAddress, `made-by-sdk@${DOMAIN}`);
    // The cookie now reads that inbox.
    await sendMail(server.smtpPort, { to: [made.address], message: message({ Subject: 'seen in the browser' }, 'x') });
    const mails = await request(server.httpUrl, '/api/mails?limit=5&offset=0', { jar });
    assert.equal(mails.json.count, 1);
    // A second inbox joins the same session.
    const other = await createAddress(server, { name: 'second' });
    await request(server.httpUrl, '/api/open_address', { method: 'POST', body: { jwt: other.jwt }, jar });
    const both = await request(server.httpUrl, '/api/session/addresses', { jar });
    assert.deepEqual((both.json.addresses as { address: string }[]).map((a) => a.address).sort(), [`made-by-sdk@${DOMAIN}`, `second@${DOMAIN}`]);
  });

  it('refuses a forged, a deleted address\'s or a malformed token, and a body that is not JSON', async () => {
    const server = await start();
    const made = await createAddress(server, { name: 'to-delete' });
    const forged = `${made.jwt.slice(0, -4)}AAAA`;
    assert.equal((await request(server.httpUrl, '/api/open_address', { method: 'POST', body: { jwt: forged } })).status, 401);
    await request(server.httpUrl, '/api/delete_address', { method: 'DELETE', jwt: made.jwt });
    const gone = await request(server.httpUrl, '/api/open_address', { method: 'POST', body: { jwt: made.jwt } });
    assert.equal(gone.status, 401);
    assert.match(gone.headers.get('content-type') ?? '', /^text\/plain/);
    for (const body of [{}, { jwt: '' }, { jwt: 5 }, { jwt: 'x', extra: 1 }]) {
      const r = await request(server.httpUrl, '/api/open_address', { method: 'POST', body });
      assert.equal(r.status, 400, JSON.stringify(body));
    }
    const form = await fetch(`${server.httpUrl}/api/open_address`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `jwt=${made.jwt}` });
    assert.equal(form.status, 415, 'a cross-site form cannot post it');
    // Nor one of enctype text/plain, which can be made to hold JSON.
    const text = await fetch(`${server.httpUrl}/api/open_address`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: JSON.stringify({ jwt: made.jwt }) });
    assert.equal(text.status, 415, 'a text/plain form cannot post it');
    assert.match(text.headers.get('content-type') ?? '', /^text\/plain/);
  });

  it('is rate-limited with switching (RATE_LIMIT_SWITCH_ADDRESS): at the limit it works, past it 429', async () => {
    const server = await start({ RATE_LIMIT_SWITCH_ADDRESS: '2/60' });
    const made = await createAddress(server);
    for (let i = 0; i < 2; i++) assert.equal((await request(server.httpUrl, '/api/open_address', { method: 'POST', body: { jwt: made.jwt } })).status, 200);
    const over = await request(server.httpUrl, '/api/open_address', { method: 'POST', body: { jwt: made.jwt } });
    assert.equal(over.status, 429);
    assert.equal(over.headers.get('retry-after'), '60', 'the refusal blocks for one whole window');
  });
});

const chromiumReady = serviceAvailable('chromium');

describe('opening an inbox in Chromium', { skip: !chromiumReady && 'Chromium is not installed', timeout: 120_000 }, () => {
  const suite = serverAndBrowser();

  it('a /#token= link opens that inbox with its mail, and the token leaves the address bar', async () => {
    const made = await createAddress(suite.server, { name: 'linked' });
    await sendMail(suite.server.smtpPort, { to: [made.address], message: message({ Subject: 'Opened from a link' }, 'hello') });
    const page = await suite.browser.newPage();
    const seen: string[] = [];
    page.on('request', (r) => seen.push(r.url()));
    const question = await openInboxLink(page, suite.server.httpUrl, made.jwt);
    assert.match(question, new RegExp(`opens the inbox linked@${DOMAIN.replace(/\./g, '\\.')} in this browser`), 'even a browser without an address is asked first');
    await page.getByText('Opened from a link').waitFor();
    assert.equal(await page.getByLabel('Active address').inputValue(), `linked@${DOMAIN}`);
    assert.equal(new URL(page.url()).hash, '', 'the fragment is cleared');
    assert.ok(!seen.some((u) => u.includes(made.jwt)), 'the token is in no URL the page requested');
    await page.close();
  });

  it('a /#token= link to another inbox asks first, naming it: declining keeps the inbox and addresses, agreeing switches', async () => {
    const context = await suite.browser.newContext();
    const page = await context.newPage();
    try {
      // This browser's own three addresses (the session's most), made in the page.
      await page.goto(suite.server.httpUrl);
      for (const name of ['own-a', 'own-b', 'own-c']) {
        await page.getByLabel('Name (optional)').fill(name);
        await page.getByRole('button', { name: 'New address' }).click();
        await page.getByText(`Waiting for mail to ${name}@${DOMAIN}`).waitFor();
      }
      const own = [`own-a@${DOMAIN}`, `own-b@${DOMAIN}`, `own-c@${DOMAIN}`];
      const listed = () => page.getByLabel('Active address').locator('option').allTextContents();
      assert.deepEqual(await listed(), own);

      const sender = await createAddress(suite.server, { name: 'senders-inbox' });
      await sendMail(suite.server.smtpPort, { to: [sender.address], message: message({ Subject: 'Planted' }, 'use this inbox') });
      const link = `${suite.server.httpUrl}/#token=${sender.jwt}`;
      // A new document each time: only a page load reads the fragment.
      const visit = async () => {
        await page.goto('about:blank');
        return (await Promise.all([page.waitForEvent('dialog'), page.goto(link)]))[0];
      };

      // Declined: nothing changes, on the server either.
      const declined = await visit();
      assert.match(declined.message(), new RegExp(`opens the inbox senders-inbox@${DOMAIN.replace(/\./g, '\\.')} in this browser`));
      assert.match(declined.message(), new RegExp(`drops own-a@${DOMAIN.replace(/\./g, '\\.')} from its list`), 'it says which address would go');
      await declined.dismiss();
      await page.getByText(`Waiting for mail to own-c@${DOMAIN}`).waitFor();
      assert.equal(new URL(page.url()).hash, '', 'the fragment is cleared either way');
      assert.equal(await page.getByLabel('Active address').inputValue(), `own-c@${DOMAIN}`);
      assert.deepEqual(await listed(), own);
      const cookies = (await context.cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
      const session = await request(suite.server.httpUrl, '/api/session/addresses', { headers: { cookie: cookies } });
      assert.deepEqual(
        (session.json.addresses as { address: string }[]).map((a) => a.address),
        own,
      );
      assert.equal(session.json.activeAddress, `own-c@${DOMAIN}`);

      // Agreed: that inbox is opened and active, and the oldest address leaves the list.
      const agreed = await visit();
      assert.match(agreed.message(), /senders-inbox@/);
      await agreed.accept();
      await page.getByText('Planted').waitFor();
      assert.equal(await page.getByLabel('Active address').inputValue(), sender.address);
      assert.deepEqual(await listed(), [`own-b@${DOMAIN}`, `own-c@${DOMAIN}`, sender.address]);

      // A link to the inbox already shown changes nothing, and is not asked about.
      let asked = false;
      page.on('dialog', (d) => {
        asked = true;
        void d.dismiss();
      });
      await page.goto('about:blank');
      await page.goto(link);
      await page.getByText('Planted').waitFor();
      assert.equal(await page.getByLabel('Active address').inputValue(), sender.address);
      assert.equal(asked, false);
    } finally {
      await context.close();
    }
  });

  it('the "Open an inbox" form takes a pasted token; a bad one gets a readable error', async () => {
    const made = await createAddress(suite.server, { name: 'pasted' });
    const page = await suite.browser.newPage();
    await page.goto(suite.server.httpUrl);
    await page.getByText('Open an inbox').click();
    await page.getByLabel('Token of an inbox made with the API, SDK or CLI').fill('not-a-token');
    await page.getByRole('button', { name: 'Open', exact: true }).click();
    await page.getByRole('alert').waitFor();
    assert.match((await page.getByRole('alert').textContent()) ?? '', /token/i);
    await page.getByLabel('Token of an inbox made with the API, SDK or CLI').fill(made.jwt);
    await page.getByRole('button', { name: 'Open', exact: true }).click();
    await page.waitForFunction((a) => (document.querySelector('select[aria-label="Active address"]') as HTMLSelectElement | null)?.value === a, `pasted@${DOMAIN}`);
    await page.close();
  });
});
