// The operators' admin (ADMIN_TOKEN; docs/decisions.md "Admin", docs/api.md "Admin"):
// without the token every /api/admin/* route, the page and its assets are 404; with it a
// request needs exactly "Authorization: Bearer <ADMIN_TOKEN>" (401 otherwise); each
// action does what it says against the real service (HTTP and SMTP), refuses bad input
// with a plain-text 400, and writes one log line that names it and its holder, never
// the token. The blocks at SMTP are in admin-blocks.test.ts, several nodes in
// admin-nodes.test.ts, the rate limit in rate-limit.test.ts, the page in web-ui-admin.test.ts.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { ConfigError, loadConfig } from '../../src/config/index.js';
import { ADMIN_WEB_ROOT } from '../../src/http/routes/admin-page.js';
import { client, createAddress, DOMAIN, message, request, sendMail, SmtpClient, startTestServer, testClock, tmp, type HttpResult, type TestServer } from '../helpers/harness.js';
import { ADMIN_AUTH as auth, ADMIN_TOKEN } from '../helpers/admin.js';
import { runExpectingFailure } from '../helpers/process.js';
const DAY = 86_400_000;

/** Every admin route with a request that would succeed (given a live address 1 and a block 1). */
const ROUTES: [method: string, path: string, body?: unknown][] = [
  ['GET', '/api/admin/addresses?limit=10&offset=0'],
  ['POST', '/api/admin/addresses', {}],
  ['DELETE', '/api/admin/addresses/1'],
  ['GET', '/api/admin/addresses/1/mails?limit=10&offset=0'],
  ['GET', '/api/admin/addresses/1/mails/0190a7c2-1234-7abc-8def-0123456789ab'],
  ['GET', '/api/admin/blocks'],
  ['POST', '/api/admin/blocks', { kind: 'domain', value: 'spam.example' }],
  ['DELETE', '/api/admin/blocks/1'],
  ['GET', '/api/admin/stats'],
];

function assertPlainText(res: HttpResult, status: number, what: string): void {
  assert.equal(res.status, status, `${what}: ${res.status} ${res.text}`);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain; charset=utf-8/, `${what}: plain text`);
  assert.equal(res.json, undefined, `${what}: not JSON`);
  assert.ok(res.text.length > 0 && !res.text.includes('\n'), `${what}: one sentence`);
}

interface Line {
  level: number;
  msg: string;
  [key: string]: unknown;
}

function capture() {
  const raw: string[] = [];
  const lines: Line[] = [];
  const logger = pino({ level: 'info' }, { write: (s: string) => void (raw.push(s), lines.push(JSON.parse(s) as Line)) });
  return { raw, lines, logger };
}

/** Lines are written when a response has finished; give the event loop a turn. */
const settle = () => new Promise((r) => setTimeout(r, 50));

describe('admin: without ADMIN_TOKEN', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.close());

  it('answers every /api/admin/* route with the plain-text 404 of an unknown path, with or without a token', async () => {
    for (const [method, path, body] of ROUTES) {
      for (const headers of [{}, auth]) {
        const res = await request(server.httpUrl, path, { method, body, headers });
        assertPlainText(res, 404, `${method} ${path}`);
        assert.match(res.text, /^No route /);
      }
    }
  });

  it('serves neither the admin page nor any admin asset (404), while the public UI is served', async () => {
    const paths = ['/admin', '/admin/', '/admin/admin.html', '/admin/assets/', '/admin.html'];
    const assets = join(ADMIN_WEB_ROOT, 'assets');
    if (existsSync(assets)) for (const f of readdirSync(assets)) paths.push(`/admin/assets/${f}`, `/assets/${f}`);
    assert.ok(paths.length > 5, `the admin page is built at ${ADMIN_WEB_ROOT} (npm run build), so that its assets are checked`);
    for (const path of paths) assertPlainText(await request(server.httpUrl, path, { headers: auth }), 404, path);
    assert.equal((await request(server.httpUrl, '/')).status, 200, 'the public UI');
  });
});

describe('admin: ADMIN_TOKEN itself', () => {
  for (const bad of ['too-short-0123456789', 'has a space in it 0123456789abcdefghij', `${'x'.repeat(31)}`, `ü${'x'.repeat(40)}`]) {
    it(`refuses ${JSON.stringify(bad.slice(0, 12))}… (${bad.length} characters) with one line that does not repeat it`, () => {
      assert.throws(
        () => loadConfig({ ADMIN_TOKEN: bad }),
        (err: unknown) =>
          err instanceof ConfigError &&
          err.message === 'ADMIN_TOKEN is invalid: expected a token of at least 32 printable ASCII characters without spaces (or leave it unset for no admin).' &&
          !err.message.includes(bad),
      );
    });
  }

  for (const weak of ['x'.repeat(32), 'ab'.repeat(20), 'abcdefghijklmnopqrstuvwxyz012345']) {
    it(`refuses the trivial ${JSON.stringify(weak.slice(0, 8))}… (${weak.length} characters) with one line that does not repeat it`, () => {
      assert.throws(
        () => loadConfig({ ADMIN_TOKEN: weak }),
        (err: unknown) =>
          err instanceof ConfigError &&
          err.message ===
            'ADMIN_TOKEN is invalid: expected a token of at least 32 printable ASCII characters without spaces, not trivially weak: at least 6 different characters, no repeated pattern or run, such as the output of openssl rand -hex 32 (or leave it unset for no admin).' &&
          !err.message.includes(weak),
      );
    });
  }

  it('accepts 32 printable characters, and unset or empty means no admin', () => {
    assert.equal(loadConfig({ ADMIN_TOKEN: 'k3#Vq9!zT0-pLm8@Wx2^Ry7&Bn5*Hc4%' }).admin.token, 'k3#Vq9!zT0-pLm8@Wx2^Ry7&Bn5*Hc4%');
    assert.equal(loadConfig({}).admin.token, undefined);
    assert.equal(loadConfig({ ADMIN_TOKEN: '' }).admin.token, undefined);
  });

  it('stops the real process at start with that one line and exit code 2', async () => {
    const { code, stderr } = await runExpectingFailure({ ADMIN_TOKEN: 'short-admin-token', DATA_DIR: tmp('temp-inbox-admin-cfg-') });
    assert.equal(code, 2);
    assert.equal(stderr.trim().split('\n').length, 1, stderr);
    assert.match(stderr, /^temp-inbox: ADMIN_TOKEN is invalid: expected a token of at least 32/);
    assert.ok(!stderr.includes('short-admin-token'));
  });
});

describe('admin: with ADMIN_TOKEN', () => {
  const log = capture();
  const clock = testClock();
  let server: TestServer;
  const admin = (path: string, opts: Parameters<typeof request>[2] = {}) => request(server.httpUrl, path, { headers: auth, ...opts });

  before(async () => {
    server = await startTestServer({ ADMIN_TOKEN, MAIL_DOMAINS: `${DOMAIN},other.test` }, undefined, log.logger, { now: clock.now });
  });
  after(() => server.close());

  it('refuses every route with a plain-text 401 without exactly "Authorization: Bearer <ADMIN_TOKEN>", and does nothing', async () => {
    const { jwt } = await createAddress(server, { name: 'not-admin' });
    const wrong: Record<string, string>[] = [
      {},
      { authorization: `Bearer ${ADMIN_TOKEN.slice(0, -1)}x` },
      { authorization: `Bearer ${ADMIN_TOKEN}x` },
      { authorization: `Bearer ${ADMIN_TOKEN.slice(0, 16)}` },
      { authorization: `bearer ${ADMIN_TOKEN}` },
      { authorization: `Bearer  ${ADMIN_TOKEN}` },
      { authorization: ADMIN_TOKEN },
      { authorization: `Basic ${Buffer.from(`admin:${ADMIN_TOKEN}`).toString('base64')}` },
      { authorization: `Bearer ${jwt}` },
      { cookie: `jwt=${jwt}` },
    ];
    for (const [method, path, body] of ROUTES) {
      for (const headers of wrong) assertPlainText(await request(server.httpUrl, path, { method, body, headers }), 401, `${method} ${path} with ${JSON.stringify(headers).slice(0, 40)}`);
    }
    // Nothing was created, blocked or deleted.
    assert.equal((await admin('/api/admin/blocks')).json.count, 0);
    assert.equal((await request(server.httpUrl, '/api/settings', { jwt })).status, 200);
    assert.equal((await admin('/api/admin/addresses?limit=100&offset=0')).json.count, 1);
  });

  it('creates addresses and hands out their tokens, under the name policy every address is made under', async () => {
    const named = await admin('/api/admin/addresses', { body: { name: 'Made.By-Admin', domain: 'other.test' } });
    assert.equal(named.status, 200, named.text);
    assert.equal(named.json.address, 'made.by-admin@other.test');
    assert.equal((await request(server.httpUrl, '/api/settings', { jwt: named.json.jwt })).json.address, 'made.by-admin@other.test');
    assert.deepEqual(named.setCookies, [], 'no cookie: the admin is not a browser session');
    const random = await admin('/api/admin/addresses', { method: 'POST' });
    assert.equal(random.status, 200, random.text);
    assert.match(random.json.address, new RegExp(`^[a-z0-9]{10}@${DOMAIN.replace('.', '\\.')}$`));
    // What the policy refuses is refused here too (docs/decisions.md "Admin").
    assertPlainText(await admin('/api/admin/addresses', { body: { name: 'postmaster' } }), 400, 'reserved name');
    assertPlainText(await admin('/api/admin/addresses', { body: { name: 'Post-Master' } }), 400, 'reserved name, folded');
    assertPlainText(await admin('/api/admin/addresses', { body: { name: 'made.by-admin', domain: 'other.test' } }), 409, 'taken');
    assertPlainText(await admin('/api/admin/addresses', { body: { name: 'x', domain: 'elsewhere.test' } }), 400, 'unknown domain');
    assertPlainText(await admin('/api/admin/addresses', { body: { name: 'bad name!' } }), 400, 'malformed name');
    assertPlainText(await admin('/api/admin/addresses', { body: { name: 'x', cf_token: 'y' } }), 400, 'unknown field');
    assertPlainText(await admin('/api/admin/addresses', { body: { name: 5 } }), 400, 'not a string');
  });

  it('lists addresses newest first with their live mail count, size and last activity; searches by part of the name; pages', async () => {
    const made: { address: string; jwt: string }[] = [];
    for (const name of ['list-alpha', 'list-beta', 'list-gamma']) made.push(await createAddress(server, { name }));
    const createdAt = clock.now();
    clock.advance(60_000);
    await sendMail(server.smtpPort, { to: [made[1]!.address], message: message({ Subject: 'one' }, 'x') });
    clock.advance(60_000);
    const lastAt = clock.now();
    await sendMail(server.smtpPort, { to: [made[1]!.address], message: message({ Subject: 'two' }, 'y') });
    await sendMail(server.smtpPort, { to: [made[1]!.address], message: message({ Subject: 'three' }, 'z') });
    const list = await request(server.httpUrl, '/api/mails?limit=10&offset=0', { jwt: made[1]!.jwt });
    const sizes = list.json.results.map((m: { metadata: string }) => JSON.parse(m.metadata).size as number);
    // A deleted mail is not counted.
    assert.equal((await request(server.httpUrl, `/api/mails/${list.json.results[0].uuid}`, { method: 'DELETE', jwt: made[1]!.jwt })).status, 200);

    const res = await admin('/api/admin/addresses?q=LIST-&limit=10&offset=0');
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.count, 3);
    assert.deepEqual(
      res.json.results.map((a: { address: string }) => a.address),
      ['list-gamma', 'list-beta', 'list-alpha'].map((n) => `${n}@${DOMAIN}`),
      'newest first, matched case-insensitively',
    );
    const beta = res.json.results[1];
    assert.deepEqual(Object.keys(beta).sort(), ['address', 'bytes', 'created_at', 'id', 'last_activity', 'mails', 'unclaimed']);
    assert.equal(beta.mails, 2);
    assert.equal(beta.bytes, sizes[1] + sizes[2]);
    assert.equal(beta.last_activity, new Date(lastAt).toISOString(), 'the newest live mail');
    assert.equal(beta.unclaimed, false);
    const gamma = res.json.results[0];
    assert.equal(gamma.mails, 0);
    assert.equal(gamma.last_activity, gamma.created_at, 'no mail: its creation');
    assert.equal(gamma.created_at, new Date(createdAt).toISOString());

    const page2 = await admin('/api/admin/addresses?q=list-&limit=2&offset=2');
    assert.deepEqual(page2.json, { results: [res.json.results[2]], count: 3 }, 'paged, with the full count');
    assert.deepEqual((await admin('/api/admin/addresses?q=gamma&limit=10&offset=0')).json.results.map((a: { id: number }) => a.id), [gamma.id]);
    assert.deepEqual((await admin('/api/admin/addresses?q=%25&limit=10&offset=0')).json, { results: [], count: 0 }, '% is a character, not a wildcard');
    assert.deepEqual((await admin('/api/admin/addresses?q=_&limit=10&offset=0')).json, { results: [], count: 0 }, '_ is a character, not a wildcard');
    const all = await admin('/api/admin/addresses?limit=100&offset=0');
    assert.ok(all.json.count >= 6);
    assert.deepEqual((await admin('/api/admin/addresses?q=&limit=100&offset=0')).json, all.json, 'an empty q is every address');
  });

  it("lists an address's mail and reads one, raw and metadata", async () => {
    const { address } = await createAddress(server, { name: 'read-me' });
    const raw = message({ From: 'Shop <shop@example.com>', To: address, Subject: 'Your code', 'Message-ID': '<admin-read@test>' }, 'Your code is 482913.');
    await sendMail(server.smtpPort, { from: 'bounce@shop.example', to: [address], message: raw });
    const id = (await admin('/api/admin/addresses?q=read-me&limit=1&offset=0')).json.results[0].id as number;
    const list = await admin(`/api/admin/addresses/${id}/mails?limit=10&offset=0`);
    assert.equal(list.status, 200, list.text);
    assert.equal(list.json.count, 1);
    const item = list.json.results[0];
    assert.equal(item.source, 'bounce@shop.example');
    assert.equal(JSON.parse(item.metadata).subject, 'Your code');
    assert.deepEqual(JSON.parse(item.metadata).codes, ['482913']);
    const one = await admin(`/api/admin/addresses/${id}/mails/${item.uuid}`);
    assert.equal(one.status, 200, one.text);
    assert.equal(one.json.uuid, item.uuid);
    assert.equal(one.json.message_id, '<admin-read@test>');
    assert.match(one.json.raw, /^Received: from /);
    assert.ok(one.json.raw.endsWith(raw), 'the raw message as received, behind its Received: line');
    assert.equal(one.json.metadata, item.metadata);
    // An upper-case uuid names the same mail.
    assert.equal((await admin(`/api/admin/addresses/${id}/mails/${item.uuid.toUpperCase()}`)).json.uuid, item.uuid);

    const other = (await admin('/api/admin/addresses?q=list-alpha&limit=1&offset=0')).json.results[0].id as number;
    assertPlainText(await admin(`/api/admin/addresses/${other}/mails/${item.uuid}`), 404, "another address's mail");
    assertPlainText(await admin(`/api/admin/addresses/${id}/mails/0190a7c2-1234-7abc-8def-0123456789ab`), 404, 'unknown uuid');
    assertPlainText(await admin('/api/admin/addresses/999999/mails?limit=10&offset=0'), 404, 'unknown address');
  });

  it('deletes an address: its token is 401, SMTP refuses its mail, its name is retired until its tombstone is purged; an unknown id is 404', async () => {
    const { address, jwt } = await createAddress(server, { name: 'doomed' });
    await sendMail(server.smtpPort, { to: [address], message: message({ Subject: 'bye' }, 'x') });
    const id = (await admin('/api/admin/addresses?q=doomed&limit=1&offset=0')).json.results[0].id as number;
    const res = await admin(`/api/admin/addresses/${id}`, { method: 'DELETE' });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json, { success: true });
    assert.equal((await request(server.httpUrl, '/api/settings', { jwt })).status, 401);
    const smtp = await SmtpClient.connect(server.smtpPort);
    try {
      await smtp.script([
        ['EHLO admin.test', 250],
        ['MAIL FROM:<a@example.com>', 250],
      ]);
      assert.match((await smtp.command(`RCPT TO:<${address}>`)).text, /^550 5\.1\.1 /);
    } finally {
      await smtp.quit();
    }
    assert.equal((await admin('/api/admin/addresses?q=doomed&limit=1&offset=0')).json.count, 0);
    assertPlainText(await admin(`/api/admin/addresses/${id}`, { method: 'DELETE' }), 404, 'deleted twice');
    assertPlainText(await admin(`/api/admin/addresses/${id}/mails?limit=10&offset=0`), 404, 'its mail');
    assertPlainText(await request(server.httpUrl, '/api/new_address', { body: { name: 'doomed' } }), 409, 'the retired name');
    const purged = await admin(`/api/admin/tombstones?address=${encodeURIComponent(address)}`, { method: 'DELETE' });
    assert.deepEqual(purged.json, { success: true, purged: 1 });
    assert.equal((await createAddress(server, { name: 'doomed' })).address, address);
  });

  it('adds, lists and removes blocks, normalised as they are matched', async () => {
    const cases: [kind: string, value: string, stored: string][] = [
      ['sender', ' Bad.Sender@Spam.EXAMPLE ', 'bad.sender@spam.example'],
      ['domain', 'Spam.Example', 'spam.example'],
      ['ip', '192.0.2.7', '192.0.2.7'],
      ['ip', '10.1.2.3/8', '10.0.0.0/8'],
      ['ip', '::ffff:198.51.100.9', '198.51.100.9'],
      ['ip', '2001:DB8:0:0:1::/48', '2001:db8::/48'],
      ['ip', '2001:db8::1/128', '2001:db8::1'],
    ];
    const ids: number[] = [];
    for (const [kind, value, stored] of cases) {
      const res = await admin('/api/admin/blocks', { body: { kind, value, note: 'test' } });
      assert.equal(res.status, 200, `${kind} ${value}: ${res.text}`);
      assert.deepEqual({ ...res.json, id: 0, created_at: '' }, { id: 0, kind, value: stored, note: 'test', created_at: '' });
      assert.equal(res.json.created_at, new Date(clock.now()).toISOString());
      ids.push(res.json.id);
    }
    assertPlainText(await admin('/api/admin/blocks', { body: { kind: 'domain', value: 'SPAM.example' } }), 409, 'blocked already');
    const list = await admin('/api/admin/blocks');
    assert.equal(list.json.count, cases.length);
    assert.deepEqual(
      list.json.results.map((b: { value: string }) => b.value),
      cases.map((c) => c[2]).reverse(),
      'newest first',
    );
    for (const id of ids) assert.deepEqual((await admin(`/api/admin/blocks/${id}`, { method: 'DELETE' })).json, { success: true });
    assertPlainText(await admin(`/api/admin/blocks/${ids[0]}`, { method: 'DELETE' }), 404, 'removed twice');
    assert.deepEqual((await admin('/api/admin/blocks')).json, { results: [], count: 0 });
  });

  it('refuses bad input with a plain-text 400: malformed ids, a too-long search, bad IPs and ranges, senders and domains', async () => {
    const bad: [method: string, path: string, body?: unknown][] = [
      ...['abc', '0', '-1', '1.5', '1e3', '01', '0x10', '99999999999999999', '%20'].flatMap((id): [string, string][] => [
        ['DELETE', `/api/admin/addresses/${id}`],
        ['GET', `/api/admin/addresses/${id}/mails?limit=10&offset=0`],
        ['GET', `/api/admin/addresses/${id}/mails/0190a7c2-1234-7abc-8def-0123456789ab`],
        ['DELETE', `/api/admin/blocks/${id}`],
      ]),
      ...['not-a-uuid', '0190a7c2-1234-7abc-8def-0123456789a', '0190a7c212347abc8def0123456789ab', 'zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz'].map(
        (uuid): [string, string] => ['GET', `/api/admin/addresses/1/mails/${uuid}`],
      ),
      ['GET', `/api/admin/addresses?q=${'a'.repeat(257)}&limit=10&offset=0`],
      ['GET', '/api/admin/addresses?q=a&q=b&limit=10&offset=0'],
      ['GET', '/api/admin/addresses?limit=0&offset=0'],
      ['GET', '/api/admin/addresses?limit=101&offset=0'],
      ['GET', '/api/admin/addresses?limit=1e1&offset=0'],
      ['GET', '/api/admin/addresses?offset=0'],
      ['GET', '/api/admin/addresses/1/mails?limit=10'],
      ...['300.1.1.1', '1.2.3', '1.2.3.4/33', '1.2.3.4/', '1.2.3.4/x', '1.2.3.4/24/8', '1.2.3.4/4', '::/0', '2001:db8::/8', 'fe80::1%eth0', 'not-an-ip', 'spam.example', '0x7f.1'].map(
        (value): [string, string, unknown] => ['POST', '/api/admin/blocks', { kind: 'ip', value }],
      ),
      ...['nobody', '@spam.example', 'a@b@c.example', 'a b@spam.example', 'a@-bad-.example', 'a@', '<a@spam.example>'].map(
        (value): [string, string, unknown] => ['POST', '/api/admin/blocks', { kind: 'sender', value }],
      ),
      ...['-bad-.example', 'a..b', 'spam_example', '@spam.example', '*.spam.example', 'x'.repeat(64) + '.example'].map(
        (value): [string, string, unknown] => ['POST', '/api/admin/blocks', { kind: 'domain', value }],
      ),
      ['POST', '/api/admin/blocks', { kind: 'asn', value: '64500' }],
      ['POST', '/api/admin/blocks', { kind: 'ip' }],
      ['POST', '/api/admin/blocks', { kind: 'ip', value: '' }],
      ['POST', '/api/admin/blocks', { kind: 'ip', value: '192.0.2.1', note: 'n'.repeat(201) }],
      ['POST', '/api/admin/blocks', { kind: 'ip', value: '192.0.2.1', extra: 1 }],
      ['POST', '/api/admin/blocks', '{"kind": "ip", "value": '],
    ];
    for (const [method, path, body] of bad) assertPlainText(await admin(path, { method, body }), 400, `${method} ${path} ${JSON.stringify(body) ?? ''}`);
    assert.equal((await admin('/api/admin/blocks')).json.count, 0, 'nothing was blocked');
  });

  it('gives mails per day for the last 30 days (counted at delivery), the top senders and the storage used', async () => {
    // A server of its own, so that the counts are exactly this test's.
    const own = testClock(Date.UTC(2026, 4, 28, 12));
    const s = await startTestServer({ ADMIN_TOKEN }, undefined, undefined, { now: own.now });
    try {
      const get = () => request(s.httpUrl, '/api/admin/stats', { headers: auth });
      const empty = await get();
      assert.equal(empty.status, 200, empty.text);
      assert.equal(empty.json.mails_per_day.length, 30);
      assert.deepEqual(empty.json.mails_per_day[0], { day: '2026-04-29', mails: 0 });
      assert.deepEqual(empty.json.mails_per_day[29], { day: '2026-05-28', mails: 0 });
      assert.deepEqual(empty.json.top_senders, []);
      assert.equal(empty.json.storage.addresses, 0);
      assert.ok(empty.json.storage.database_bytes > 0);

      const a = await createAddress(s, { name: 'stats-a' });
      const b = await createAddress(s, { name: 'stats-b' });
      // Yesterday: 3 mails from one sender (one message to two addresses is two mails).
      own.advance(-DAY);
      await sendMail(s.smtpPort, { from: 'often@sender.example', to: [a.address, b.address], message: message({ Subject: 'both' }, 'x') });
      await sendMail(s.smtpPort, { from: 'often@sender.example', to: [a.address], message: message({ Subject: 'a' }, 'x') });
      // Today: 1 mail from another.
      own.advance(DAY);
      await sendMail(s.smtpPort, { from: 'once@sender.example', to: [b.address], message: message({ Subject: 'b' }, 'x') });
      const stats = await get();
      assert.deepEqual(stats.json.mails_per_day.slice(-3), [
        { day: '2026-05-26', mails: 0 },
        { day: '2026-05-27', mails: 3 },
        { day: '2026-05-28', mails: 1 },
      ]);
      assert.deepEqual(stats.json.top_senders, [
        { sender: 'often@sender.example', mails: 3 },
        { sender: 'once@sender.example', mails: 1 },
      ]);
      assert.equal((await request(s.httpUrl, '/api/mails?limit=10&offset=0', { jwt: a.jwt })).json.count, 2);
      assert.equal(stats.json.storage.addresses, 2);
      assert.equal(stats.json.storage.mails, 4);
      assert.ok(stats.json.storage.mail_bytes > 0);
      assert.ok(stats.json.storage.database_bytes >= empty.json.storage.database_bytes);

      // Deleting the address takes its mail from storage, not from the days it arrived on.
      assert.equal((await request(s.httpUrl, '/api/delete_address', { method: 'DELETE', jwt: a.jwt })).status, 200);
      const after = await get();
      assert.deepEqual(after.json.mails_per_day.slice(-2), stats.json.mails_per_day.slice(-2));
      assert.equal(after.json.storage.addresses, 1);
      assert.equal(after.json.storage.mails, 2);
      // A month on, yesterday's mails are out of the window.
      own.advance(29 * DAY);
      const later = await get();
      assert.deepEqual(later.json.mails_per_day[0], { day: '2026-05-28', mails: 1 });
      assert.ok(later.json.mails_per_day.slice(1).every((d: { mails: number }) => d.mails === 0));
    } finally {
      await s.close();
    }
  });

  it('logs each action in one line that says what, on which, by whom and how it ended, and never the token', async () => {
    const from = log.lines.length;
    const made = await admin('/api/admin/addresses', { body: { name: 'logged' } });
    const id = (await admin('/api/admin/addresses?q=logged&limit=5&offset=0')).json.results[0].id as number;
    const block = await admin('/api/admin/blocks', { body: { kind: 'ip', value: '203.0.113.0/24', note: 'why' } });
    await admin(`/api/admin/blocks/${block.json.id}`, { method: 'DELETE' });
    await admin(`/api/admin/addresses/${id}/mails?limit=5&offset=0`);
    await admin(`/api/admin/addresses/${id}`, { method: 'DELETE' });
    await admin(`/api/admin/addresses/${id}`, { method: 'DELETE' });
    await admin('/api/admin/stats');
    await admin('/api/admin/blocks');
    await admin(`/api/admin/tombstones?address=${encodeURIComponent(made.json.address)}`, { method: 'DELETE' });
    await admin('/api/admin/tombstones', { method: 'DELETE' });
    await request(server.httpUrl, '/api/admin/stats', { headers: { authorization: `Bearer wrong-${ADMIN_TOKEN}` } });
    await settle();
    const actions = log.lines.slice(from).filter((l) => l.msg === 'admin action');
    const by = actions[0]?.['by'];
    assert.match(String(by), /^admin token [0-9a-f]{12}$/);
    assert.deepEqual(
      actions.map((l) => [l['adminAction'], l['status']]),
      [
        ['address.create', 200],
        ['addresses.list', 200],
        ['block.add', 200],
        ['block.remove', 200],
        ['mails.list', 200],
        ['address.delete', 200],
        ['address.delete', 404],
        ['stats.read', 200],
        ['blocks.list', 200],
        ['tombstones.purge', 200],
        ['tombstones.purge', 200],
      ],
    );
    for (const l of actions) {
      assert.equal(l.level, 30);
      assert.equal(l['by'], by, 'the same holder every time');
      assert.equal(l['ip'], '127.0.0.1');
      assert.match(String(l['reqId']), /^[0-9a-f-]{36}$/);
    }
    const find = (action: string) => actions.find((l) => l['adminAction'] === action)!;
    assert.equal(find('address.create')['address'], made.json.address);
    assert.equal(find('address.delete')['address'], made.json.address);
    assert.equal(find('address.delete')['addressId'], String(id));
    assert.deepEqual([find('block.add')['kind'], find('block.add')['value'], find('block.add')['blockId']], ['ip', '203.0.113.0/24', block.json.id]);
    assert.equal(find('block.remove')['blockId'], String(block.json.id));
    const purges = actions.filter((l) => l['adminAction'] === 'tombstones.purge');
    assert.deepEqual(
      purges.map((l) => [l['address'], l['all'], l['purged']]),
      [
        [made.json.address, undefined, 1],
        [undefined, true, purges[1]!['purged']],
      ],
    );
    assert.equal(typeof purges[1]!['purged'], 'number');
    // The refused token: one warning with the client, no action line.
    const refused = log.lines.slice(from).filter((l) => l.msg === 'admin token refused');
    assert.equal(refused.length, 1);
    assert.equal(refused[0]!['ip'], '127.0.0.1');
    const text = log.raw.join('');
    assert.ok(!text.includes(ADMIN_TOKEN), 'the token is never logged');
    assert.ok(!text.includes(made.json.jwt), "a created address's token is never logged");
  });

  it('serves the admin page and its assets with a strict policy', async () => {
    const page = await request(server.httpUrl, '/admin');
    assert.equal(page.status, 200, 'the admin page is built (npm run build)');
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    const csp = page.headers.get('content-security-policy') ?? '';
    assert.match(csp, /default-src 'self'/);
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.equal(page.headers.get('referrer-policy'), 'no-referrer');
    assert.equal((await request(server.httpUrl, '/admin/')).text, page.text);
    const assets = [...page.text.matchAll(/(?:src|href)="(\/admin\/assets\/[^"]+)"/g)].map((m) => m[1]!);
    assert.ok(assets.some((a) => a.endsWith('.js')) && assets.some((a) => a.endsWith('.css')), page.text);
    for (const asset of assets) {
      const res = await client(server)(asset);
      assert.equal(res.status, 200, asset);
      assert.equal(res.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    }
    assertPlainText(await request(server.httpUrl, '/admin/nothing-here'), 404, 'an unknown path under /admin/');
  });
});
