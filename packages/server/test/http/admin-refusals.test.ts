// GET /api/admin/refusals (docs/api.md "Admin"): only with the admin token (a wrong one counted
// under RATE_LIMIT_ADMIN), ?hours checked (a plain-text 400), the counts of a node written in
// batches (many refusals, one row), at stop, and pruned after 31 days by the retention sweep.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { DOMAIN, request, SmtpClient, startTestServer, testClock, tmp, type TestServer } from '../helpers/harness.js';
import { ADMIN_TOKEN, adminRequest } from '../helpers/admin.js';

const PATH = '/api/admin/refusals';
const HOUR = 3_600_000;

/** `n` RCPT TO an unknown mailbox in one session (each a 550 5.1.1). */
async function unknownRecipients(server: TestServer, n: number): Promise<void> {
  const smtp = await SmtpClient.connect(server.smtpPort);
  try {
    await smtp.command('EHLO client.test');
    assert.equal((await smtp.command('MAIL FROM:<a@x.example>')).code, 250);
    for (let i = 0; i < n; i++) assert.equal((await smtp.command(`RCPT TO:<nobody${i}@${DOMAIN}>`)).code, 550);
  } finally {
    await smtp.quit();
  }
}

describe('GET /api/admin/refusals: access and input', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ ADMIN_TOKEN, RATE_LIMIT_ADMIN: '3/60' });
  });
  after(async () => server?.close());

  it('without a token, or with a wrong one: 401 in plain text; past RATE_LIMIT_ADMIN wrong tokens are 429, the right one still works', async () => {
    const none = await request(server.httpUrl, PATH, { localAddress: '127.0.0.2' });
    assert.equal(none.status, 401);
    assert.match(none.headers.get('content-type') ?? '', /^text\/plain/);
    assert.equal(none.json, undefined);
    const wrong = { headers: { authorization: 'Bearer not-the-admin-token-0123456789-abcdef' }, localAddress: '127.0.0.2' };
    assert.equal((await request(server.httpUrl, PATH, wrong)).status, 401);
    assert.equal((await request(server.httpUrl, PATH, wrong)).status, 401);
    const limited = await request(server.httpUrl, PATH, wrong);
    assert.equal(limited.status, 429, limited.text);
    assert.ok(Number(limited.headers.get('retry-after')) > 0);
    assert.equal((await adminRequest(server, PATH, { localAddress: '127.0.0.2' })).status, 200);
  });

  it('a bad ?hours is a plain-text 400 naming the rule; 1 and 744 are taken, 24 is the default', async () => {
    for (const hours of ['abc', '0', '745', '100000', '-1', '1.5', '', ' 2', '1e2']) {
      const res = await adminRequest(server, `${PATH}?hours=${encodeURIComponent(hours)}`);
      assert.equal(res.status, 400, `hours=${hours}: ${res.text}`);
      assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
      assert.match(res.text, /hours is a whole number from 1 to 744/, `hours=${hours}`);
    }
    const extra = await adminRequest(server, `${PATH}?days=2`);
    assert.equal(extra.status, 400, extra.text);
    for (const [query, hours] of [['?hours=1', 1], ['?hours=744', 744], ['', 24]] as const) {
      const res = await adminRequest(server, `${PATH}${query}`);
      assert.equal(res.status, 200, res.text);
      const { from, to } = res.json as { from: string; to: string };
      assert.equal(Date.parse(from), Math.floor(Date.parse(to) / HOUR) * HOUR - (hours - 1) * HOUR, query);
    }
  });
});

describe('refusal counts: batched, kept at stop, pruned by the sweep', () => {
  const clock = testClock(Math.floor(Date.now() / HOUR) * HOUR + 60_000);
  const dir = tmp('temp-inbox-refusals-');
  let server: TestServer;
  const start = () => startTestServer({ ADMIN_TOKEN, SMTP_MAX_BAD_RECIPIENTS: '100', SMTP_BAD_RECIPIENT_DELAY: '0' }, dir, undefined, { now: clock.now });
  before(async () => {
    server = await start();
  });
  after(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('fifty refusals in an hour are one row of fifty; the counts of a stopped node are written before it stops', async () => {
    await unknownRecipients(server, 50);
    await server.close({ keepData: true });
    server = await start();
    // Read from the store, not through the admin's read (which writes this node's counts first).
    assert.deepEqual(await server.store.listRefusals(0), [{ hour: Math.floor(clock.now() / HOUR) * HOUR, reason: 'unknown_recipient', recipientDomain: DOMAIN, count: 50 }]);
    const res = await adminRequest(server, PATH);
    assert.equal(res.json.totals.unknown_recipient, 50);
  });

  it('an hour later the next refusals make a row of their own; a window of one hour shows only the current one', async () => {
    clock.advance(HOUR);
    await unknownRecipients(server, 2);
    const res = await adminRequest(server, `${PATH}?hours=1`);
    assert.deepEqual(res.json.hours, [{ hour: new Date(Math.floor(clock.now() / HOUR) * HOUR).toISOString(), reason: 'unknown_recipient', recipientDomain: DOMAIN, count: 2 }]);
    assert.equal(res.json.totals.unknown_recipient, 2);
    assert.equal((await adminRequest(server, `${PATH}?hours=2`)).json.totals.unknown_recipient, 52);
  });

  it('the retention sweep prunes the hours older than 31 days, and keeps the others', async () => {
    clock.advance(31 * 24 * HOUR - HOUR / 2);
    await server.mail.sweep();
    assert.deepEqual((await server.store.listRefusals(0)).map((r) => r.count), [2], 'the first hour is 31 days and a half hour old');
    clock.advance(HOUR);
    await server.mail.sweep();
    assert.deepEqual(await server.store.listRefusals(0), []);
  });
});
