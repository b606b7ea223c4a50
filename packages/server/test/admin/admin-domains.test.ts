// The domain pool's admin API (/api/admin/domains; docs/api.md "Admin", docs/operating.md
// "Domains and rotation") on a real server: the token's check, the list as MAIL_DOMAINS
// seeded it, add (201, 409), PATCH, DELETE, bad input as plain-text 400s, and the MX check
// against a real DNS server of the test's own (and one that never answers). The public list
// GET /api/domains, its rate limit, and what each state does are in mail/domain-pool.test.ts.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request, startTestServer, type HttpResult, type TestServer } from '../helpers/harness.js';
import { adminRequest, ADMIN_TOKEN } from '../helpers/admin.js';
import { startTestDns, type TestDns } from '../helpers/dns-server.js';

function assertPlainText(res: HttpResult, status: number, what: string, pattern?: RegExp): void {
  assert.equal(res.status, status, `${what}: ${res.status} ${res.text}`);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain; charset=utf-8/, `${what}: plain text`);
  if (pattern) assert.match(res.text, pattern, what);
}

interface AdminDomain {
  domain: string;
  state: string;
  subdomains: boolean;
  addedAt: string;
  stateChangedAt: string;
  retiredUntil: string | null;
}

describe('admin domains: the API', () => {
  let server: TestServer;
  let dns: TestDns;
  before(async () => {
    // Any subdomain of wild.example has the wildcard MX (a random label's look-up finds it).
    dns = await startTestDns({ answer: (name) => (name.endsWith('.wild.example') ? { MX: [{ exchange: 'mx.test', priority: 10 }] } : undefined) });
    server = await startTestServer({
      ADMIN_TOKEN,
      MAIL_DOMAINS: 'one.test,two.test',
      MAIL_SUBDOMAINS: 'two.test',
      DNS_SERVERS: dns.server,
      MX_HOSTNAMES: 'mx.test,mx2.test',
    });
  });
  after(async () => {
    await server.close();
    await dns.close();
  });
  const admin = (path: string, opts: Parameters<typeof adminRequest>[2] = {}) => adminRequest(server, path, opts);

  it('refuses every domain route without the admin token (401) or with a wrong one', async () => {
    const routes: [string, string, unknown?][] = [
      ['GET', '/api/admin/domains'],
      ['POST', '/api/admin/domains', { domain: 'x.test' }],
      ['PATCH', '/api/admin/domains/one.test', { state: 'disabled' }],
      ['DELETE', '/api/admin/domains/one.test'],
      ['GET', '/api/admin/domains/one.test/dns'],
    ];
    for (const [method, path, body] of routes) {
      assertPlainText(await request(server.httpUrl, path, { method, body }), 401, `${method} ${path} without a token`);
      assertPlainText(await request(server.httpUrl, path, { method, body, headers: { authorization: 'Bearer wrong-token-0123456789-0123456789-x' } }), 401, `${method} ${path} with a wrong token`);
    }
    const list = await admin('/api/admin/domains');
    assert.deepEqual(
      (list.json as { domains: AdminDomain[] }).domains.map((d) => d.domain),
      ['one.test', 'two.test'],
      'nothing changed',
    );
  });

  it('lists the pool as MAIL_DOMAINS and MAIL_SUBDOMAINS seeded it, with the selection', async () => {
    const res = await admin('/api/admin/domains');
    assert.equal(res.status, 200);
    const body = res.json as { domains: AdminDomain[]; selection: string };
    assert.equal(body.selection, 'first');
    assert.deepEqual(
      body.domains.map((d) => [d.domain, d.state, d.subdomains, d.retiredUntil]),
      [
        ['one.test', 'active', false, null],
        ['two.test', 'active', true, null],
      ],
    );
    for (const d of body.domains) assert.ok(!Number.isNaN(Date.parse(d.addedAt)) && d.stateChangedAt === d.addedAt, 'ISO times');
  });

  it('adds a domain (201, lower-cased, final dot dropped), and a second add of it is 409', async () => {
    const res = await admin('/api/admin/domains', { method: 'POST', body: { domain: 'New.Example.', subdomains: true } });
    assert.equal(res.status, 201, res.text);
    const added = res.json as AdminDomain;
    assert.equal(added.domain, 'new.example');
    assert.equal(added.state, 'active');
    assert.equal(added.subdomains, true);
    assertPlainText(await admin('/api/admin/domains', { method: 'POST', body: { domain: 'new.example' } }), 409, 'duplicate', /already has new\.example/);
    const list = (await admin('/api/admin/domains')).json as { domains: AdminDomain[] };
    assert.deepEqual(
      list.domains.map((d) => d.domain),
      ['one.test', 'two.test', 'new.example'],
      'added last',
    );
  });

  it('refuses bad domain names and bodies with a plain-text 400', async () => {
    const bad: unknown[] = [
      { domain: 'nodot' },
      { domain: '-lead.example' },
      { domain: 'a..b.example' },
      { domain: 'space in.example' },
      { domain: `${'a'.repeat(64)}.example` },
      { domain: 'sandbox.invalid' },
      { domain: '' },
      { domain: 42 },
      {},
      { domain: 'ok.example', extra: true },
      { domain: 'ok.example', subdomains: 'yes' },
    ];
    for (const body of bad) assertPlainText(await admin('/api/admin/domains', { method: 'POST', body }), 400, `POST ${JSON.stringify(body)}`);
    // A state outside the three names the three, once each (not Ajv's "must be equal to constant" per value).
    for (const state of ['deleted', 'Active', null]) {
      const res = await admin('/api/admin/domains/one.test', { method: 'PATCH', body: { state } });
      assertPlainText(res, 400, `state ${String(state)}`);
      assert.equal(res.text, 'Invalid request: body/state must be one of active, disabled, retired.', `state ${String(state)}`);
    }
    assertPlainText(await admin('/api/admin/domains/one.test', { method: 'PATCH', body: {} }), 400, 'nothing to change', /^Nothing to change: send "state" \(active, disabled or retired\), "subdomains" \(true or false\), or both\.$/);
    assertPlainText(await admin('/api/admin/domains/one.test', { method: 'PATCH', body: { subdomains: 1 } }), 400, 'subdomains not a boolean');
    assertPlainText(await admin('/api/admin/domains/bad_name', { method: 'PATCH', body: { state: 'active' } }), 400, 'bad path domain', /Invalid domain/);
    assertPlainText(await admin('/api/admin/domains/bad_name', { method: 'DELETE' }), 400, 'bad path domain');
    assertPlainText(await admin('/api/admin/domains/nowhere.example', { method: 'PATCH', body: { state: 'disabled' } }), 404, 'unknown domain', /no domain nowhere\.example/);
    assertPlainText(await admin('/api/admin/domains/nowhere.example', { method: 'DELETE' }), 404, 'unknown domain');
    assertPlainText(await admin('/api/admin/domains/nowhere.example/dns'), 404, 'unknown domain');
  });

  it('PATCH changes the state and subdomains; the state time moves only with the state; retired has retiredUntil = now + DOMAIN_RETIRE_GRACE', async () => {
    await admin('/api/admin/domains', { method: 'POST', body: { domain: 'patch.example' } });
    const sub = (await admin('/api/admin/domains/patch.example', { method: 'PATCH', body: { subdomains: true } })).json as AdminDomain;
    assert.equal(sub.subdomains, true);
    assert.equal(sub.stateChangedAt, sub.addedAt, 'subdomains alone leave the state time');
    const before = Date.now();
    const retired = (await admin('/api/admin/domains/patch.example', { method: 'PATCH', body: { state: 'retired' } })).json as AdminDomain;
    assert.equal(retired.state, 'retired');
    const until = Date.parse(retired.retiredUntil!) - Date.parse(retired.stateChangedAt);
    assert.equal(until, 7 * 86_400_000, 'the default grace, 7 days');
    assert.ok(Date.parse(retired.stateChangedAt) >= before - 1000);
    const again = (await admin('/api/admin/domains/patch.example', { method: 'PATCH', body: { state: 'retired' } })).json as AdminDomain;
    assert.equal(again.retiredUntil, retired.retiredUntil, 'retiring again does not move the grace');
    const back = (await admin('/api/admin/domains/patch.example', { method: 'PATCH', body: { state: 'active' } })).json as AdminDomain;
    assert.equal(back.retiredUntil, null);
    assert.equal(back.subdomains, true);
    const del = await admin('/api/admin/domains/patch.example', { method: 'DELETE' });
    assert.deepEqual(del.json, { success: true });
    const list = (await admin('/api/admin/domains')).json as { domains: AdminDomain[] };
    assert.ok(!list.domains.some((d) => d.domain === 'patch.example'), 'deleted');
  });

  it('the MX check: pointing here, elsewhere, the implicit MX of an A record, none, and a server that never answers', async () => {
    for (const domain of ['here.example', 'elsewhere.example', 'implicit.example', 'nothing.example', 'silent.example', 'backup.example']) {
      await admin('/api/admin/domains', { method: 'POST', body: { domain } });
    }
    dns.zone.set('here.example', { MX: [{ exchange: 'MX.test', priority: 10 }] });
    dns.zone.set('elsewhere.example', { MX: [{ exchange: 'mail.other.example', priority: 10 }] });
    dns.zone.set('backup.example', { MX: [{ exchange: 'primary.other.example', priority: 5 }, { exchange: 'mx2.test', priority: 20 }] });
    dns.zone.set('implicit.example', { A: ['192.0.2.1'] });
    dns.silent.add('silent.example');
    const check = async (domain: string) => {
      const res = await admin(`/api/admin/domains/${domain}/dns`);
      assert.equal(res.status, 200, `${domain}: ${res.text}`);
      return res.json as { domain: string; mx: { exchange: string; priority: number }[]; pointsHere: boolean; expected: string[]; message: string };
    };
    const here = await check('here.example');
    assert.deepEqual(here.mx, [{ exchange: 'mx.test', priority: 10 }]);
    assert.equal(here.pointsHere, true);
    assert.deepEqual(here.expected, ['mx.test', 'mx2.test']);
    assert.match(here.message, /points here \(mx\.test\)/);
    const elsewhere = await check('elsewhere.example');
    assert.equal(elsewhere.pointsHere, false);
    assert.match(elsewhere.message, /mail\.other\.example, none of which is mx\.test, mx2\.test/);
    const backup = await check('backup.example');
    assert.equal(backup.pointsHere, true);
    assert.deepEqual(
      backup.mx.map((m) => m.exchange),
      ['primary.other.example', 'mx2.test'],
      'lowest priority first',
    );
    assert.match(backup.message, /primary\.other\.example is preferred/);
    const implicit = await check('implicit.example');
    assert.deepEqual(implicit.mx, [{ exchange: 'implicit.example', priority: 0 }], 'RFC 5321 §5.1: the domain itself');
    assert.equal(implicit.pointsHere, false);
    const nothing = await check('nothing.example');
    assert.deepEqual(nothing.mx, []);
    assert.match(nothing.message, /no MX record and no A or AAAA record/);
    const started = Date.now();
    const silent = await check('silent.example');
    assert.equal(silent.pointsHere, false);
    assert.match(silent.message, /could not be read/);
    assert.ok(Date.now() - started < 8000, 'bounded');
    assert.ok(dns.queries.includes('MX here.example'), 'asked the DNS_SERVERS');
  });

  it('the MX check of a domain with random subdomains also says whether a wildcard MX covers them', async () => {
    for (const domain of ['wild.example', 'nowild.example']) {
      await admin('/api/admin/domains', { method: 'POST', body: { domain, subdomains: true } });
      dns.zone.set(domain, { MX: [{ exchange: 'mx.test', priority: 10 }] });
    }
    const wild = (await admin('/api/admin/domains/wild.example/dns')).json as { pointsHere: boolean; message: string };
    assert.equal(wild.pointsHere, true);
    assert.match(wild.message, /wildcard MX of its random subdomains points here too/);
    const nowild = (await admin('/api/admin/domains/nowild.example/dns')).json as { pointsHere: boolean; message: string };
    assert.equal(nowild.pointsHere, true, 'the domain itself points here');
    assert.match(nowild.message, /[a-z][a-z0-9]{3,5}\.nowild\.example has no MX record: add "\*\.nowild\.example\. MX 10 mx\.test\."/);
    assert.ok(dns.queries.some((q) => /^MX [a-z][a-z0-9]{3,5}\.wild\.example$/.test(q)), 'a random label was asked for');
  });
});

describe('admin domains: wrong tokens are rate limited (RATE_LIMIT_ADMIN)', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ ADMIN_TOKEN, RATE_LIMIT_ADMIN: '2/60' });
  });
  after(async () => {
    await server.close();
  });

  it('past the limit a wrong token is a plain-text 429; the right token still works', async () => {
    const wrong = { authorization: 'Bearer wrong-token-0123456789-0123456789-x' };
    for (let i = 0; i < 2; i++) assertPlainText(await request(server.httpUrl, '/api/admin/domains', { headers: wrong }), 401, `wrong token ${i + 1}`);
    const limited = await request(server.httpUrl, '/api/admin/domains', { method: 'POST', body: { domain: 'x.example' }, headers: wrong });
    assertPlainText(limited, 429, 'past the limit');
    assert.ok(Number(limited.headers.get('retry-after')) > 0);
    assert.equal((await adminRequest(server, '/api/admin/domains')).status, 200);
  });
});
