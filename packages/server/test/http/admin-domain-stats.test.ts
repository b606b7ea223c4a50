// GET /api/admin/domains/stats (docs/api.md "Admin", docs/operating.md "The operator's
// view") against the real service over HTTP and SMTP: per domain the addresses, the mails
// of the last 24 hours and of the window (counted at delivery, so deletion takes nothing
// back), the share SMTP refused, the top sending domains, answers reused for a minute; bad input is a plain-text
// 400, a missing or wrong token a 401 counted under RATE_LIMIT_ADMIN; on PostgreSQL a mail
// taken by one node counts on the other.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ADMIN_TOKEN, adminRequest } from '../helpers/admin.js';
import { createAddress, DOMAIN, message, request, sendMail, SmtpClient, startTestServer, testClock, type HttpResult, type TestServer } from '../helpers/harness.js';
import { twoNodes } from '../helpers/nodes.js';
import { skipUnless } from '../helpers/services.js';

const HOUR = 3_600_000;
const PATH = '/api/admin/domains/stats';

interface Figures {
  domain: string;
  addresses: number;
  mailsDay: number;
  mailsWeek: number;
  refusedShareWeek: number;
  topSendingDomains: { domain: string; mails: number }[];
}

function assertPlainText(res: HttpResult, status: number, what: string): void {
  assert.equal(res.status, status, `${what}: ${res.status} ${res.text}`);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain; charset=utf-8/, `${what}: plain text`);
  assert.ok(res.text.length > 0 && !res.text.includes('\n'), `${what}: one sentence`);
}

async function figuresOf(server: TestServer, domain: string, days?: number): Promise<Figures> {
  const res = await adminRequest(server, days === undefined ? PATH : `${PATH}?days=${days}`);
  assert.equal(res.status, 200, res.text);
  const found = (res.json.domains as Figures[]).find((d) => d.domain === domain);
  assert.ok(found, `${domain} is listed: ${res.text}`);
  return found;
}

const send = (server: TestServer, from: string, to: string) => sendMail(server.smtpPort, { from, to: [to], message: message({ Subject: 'stats' }, 'x') });

describe('GET /api/admin/domains/stats', () => {
  const clock = testClock(Date.UTC(2026, 4, 28, 12, 30));
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ ADMIN_TOKEN, RATE_LIMIT_ADMIN: '3/60' }, undefined, undefined, { now: clock.now });
  });
  after(async () => {
    await server?.close();
  });

  it('counts per domain the addresses, the mails of the day and of the window, and the top sending domains', async () => {
    const empty = await figuresOf(server, DOMAIN);
    assert.deepEqual(empty, { domain: DOMAIN, addresses: 0, mailsDay: 0, mailsWeek: 0, refusedShareWeek: 0, topSendingDomains: [] });

    const a = await createAddress(server, { name: 'stats-a' });
    const b = await createAddress(server, { name: 'stats-b' });
    // Three days ago: two mails from news.example; today: three from shop.example, one from the null sender.
    clock.advance(-3 * 24 * HOUR);
    await send(server, 'one@news.example', a.address);
    await send(server, 'two@NEWS.example', b.address);
    clock.advance(3 * 24 * HOUR);
    for (const to of [a.address, a.address, b.address]) await send(server, 'deals@shop.example', to);
    await send(server, '', b.address);
    // Deleting an address takes its mail from storage, not from the counts.
    assert.equal((await request(server.httpUrl, '/api/delete_address', { method: 'DELETE', jwt: a.jwt })).status, 200);

    clock.advance(61_000);
    const res = await adminRequest(server, PATH);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.days, 7);
    assert.deepEqual(
      res.json.domains.find((d: Figures) => d.domain === DOMAIN),
      {
        domain: DOMAIN,
        addresses: 1,
        mailsDay: 4,
        mailsWeek: 6,
        refusedShareWeek: 0,
        topSendingDomains: [
          { domain: 'shop.example', mails: 3 },
          { domain: 'news.example', mails: 2 },
          { domain: '', mails: 1 },
        ],
      },
    );
    // A window of two days leaves out the mail of three days ago.
    const two = await figuresOf(server, DOMAIN, 2);
    assert.equal(two.mailsWeek, 4);
    assert.deepEqual(
      two.topSendingDomains.map((s) => s.domain),
      ['shop.example', ''],
    );
  });

  it('gives the share of the window SMTP refused for the domain', async () => {
    clock.advance(61_000);
    const before = await figuresOf(server, DOMAIN);
    // Two recipients refused (no such mailbox), counted under the domain; one before any recipient is under none.
    const smtp = await SmtpClient.connect(server.smtpPort);
    await smtp.command('EHLO stats.test');
    await smtp.command('MAIL FROM:<x@shop.example>');
    for (const name of ['nobody-1', 'nobody-2']) assert.equal((await smtp.command(`RCPT TO:<${name}@${DOMAIN}>`)).code, 550);
    await smtp.quit();
    clock.advance(61_000);
    const after = await figuresOf(server, DOMAIN);
    assert.equal(after.mailsWeek, before.mailsWeek);
    assert.equal(after.refusedShareWeek, 2 / (2 + after.mailsWeek));
  });

  it('reuses an answer for a minute, then reads again', async () => {
    clock.advance(61_000);
    const before = await figuresOf(server, DOMAIN);
    const c = await createAddress(server, { name: 'stats-c' });
    await send(server, 'late@late.example', c.address);
    assert.deepEqual(await figuresOf(server, DOMAIN), before, 'the same answer within the minute');
    clock.advance(61_000);
    const later = await figuresOf(server, DOMAIN);
    assert.equal(later.mailsDay, before.mailsDay + 1);
    assert.equal(later.addresses, before.addresses + 1);
  });

  it('refuses a bad window with a plain-text 400', async () => {
    for (const days of ['abc', '0', '400', '32', '1.5', '-1', '', '7a', '0x10']) {
      assertPlainText(await adminRequest(server, `${PATH}?days=${encodeURIComponent(days)}`), 400, `days=${days}`);
    }
    assert.equal((await adminRequest(server, `${PATH}?days=31`)).status, 200);
    assert.equal((await adminRequest(server, `${PATH}?days=1`)).status, 200);
  });

  it('refuses a missing or wrong token with a plain-text 401, and wrong ones past RATE_LIMIT_ADMIN with a 429', async () => {
    assertPlainText(await request(server.httpUrl, PATH), 401, 'no token');
    assertPlainText(await request(server.httpUrl, PATH, { headers: { authorization: `Bearer wrong-${ADMIN_TOKEN}` } }), 401, 'a wrong token');
    assertPlainText(await request(server.httpUrl, PATH, { headers: { authorization: ADMIN_TOKEN } }), 401, 'not a Bearer header');
    const limited = await request(server.httpUrl, PATH, { headers: { authorization: 'Bearer another-guess' } });
    assertPlainText(limited, 429, 'the fourth wrong token');
    assert.equal(limited.headers.get('retry-after'), '60');
    assert.equal((await adminRequest(server, PATH)).status, 200, 'the right token is never limited');
  });
});

const pgSkip = skipUnless('postgres', 'redis');
describe('GET /api/admin/domains/stats: two nodes on PostgreSQL', { skip: pgSkip }, () => {
  const nodes = twoNodes('ds', pgSkip, { ADMIN_TOKEN });

  it('counts on one node the mail another node took', async () => {
    const x = await createAddress(nodes.a, { name: 'pg-stats' });
    await send(nodes.b, 'a@one.example', x.address);
    await send(nodes.a, 'b@one.example', x.address);
    await send(nodes.b, 'c@two.example', x.address);
    for (const node of [nodes.a, nodes.b]) {
      const f = await figuresOf(node, DOMAIN);
      assert.equal(f.addresses, 1);
      assert.equal(f.mailsDay, 3);
      assert.equal(f.mailsWeek, 3);
      assert.deepEqual(f.topSendingDomains, [
        { domain: 'one.example', mails: 2 },
        { domain: 'two.example', mails: 1 },
      ]);
    }
  });
});
