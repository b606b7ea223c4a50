// The domain pool as users and senders meet it (docs/operating.md "Domains and rotation",
// "Random subdomains"), on a real server on SQLite with real HTTP and SMTP: the public lists
// (GET /api/domains, mail.tm's /domains, ui-config) show the active domains; a disabled
// domain takes no new address but its addresses keep their mail and tokens; a retired one
// takes mail until its grace ends, then RCPT gets a 550 that says so; a deleted one takes
// none; the three selections; random subdomains end to end with their isolation. The admin
// API's own checks are in admin/admin-domains.test.ts, two nodes in integration/domain-pool-nodes.test.ts.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { client, createAddress, message, request, sendMail, SmtpClient, startTestServer, testClock, type TestServer } from '../helpers/harness.js';
import { adminRequest, ADMIN_TOKEN } from '../helpers/admin.js';

const DAY = 86_400_000;

/** The RCPT TO reply for `to` in a fresh session. */
async function rcpt(server: TestServer, to: string): Promise<{ code: number; text: string }> {
  const smtp = await SmtpClient.connect(server.smtpPort);
  try {
    await smtp.script([
      ['EHLO client.test', 250],
      ['MAIL FROM:<sender@example.com>', 250],
    ]);
    return await smtp.command(`RCPT TO:<${to}>`);
  } finally {
    await smtp.quit();
  }
}

/** The address's mails as GET /api/mails lists them, with each one's subject (from its metadata). */
async function mails(server: TestServer, jwt: string): Promise<{ results: { uuid: string; subject: string }[]; count: number }> {
  const body = (await request(server.httpUrl, '/api/mails?limit=10&offset=0', { jwt })).json as { results: { uuid: string; metadata: string }[]; count: number };
  return { count: body.count, results: body.results.map((m) => ({ uuid: m.uuid, subject: (JSON.parse(m.metadata) as { subject: string }).subject })) };
}
const setState = (server: TestServer, domain: string, state: string) => adminRequest(server, `/api/admin/domains/${domain}`, { method: 'PATCH', body: { state } });

describe('domain pool: states, public lists and selection', () => {
  const clock = testClock();
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ ADMIN_TOKEN, MAIL_DOMAINS: 'a.test,b.test,c.test', DOMAIN_RETIRE_GRACE: '2d' }, undefined, undefined, { now: clock.now });
  });
  after(async () => {
    await server.close();
  });
  const api = (path: string, opts?: Parameters<typeof request>[2]) => request(server.httpUrl, path, opts);

  it('GET /api/domains, mail.tm /domains and ui-config list the active domains, the default first; a new address without a domain gets the first', async () => {
    const res = await api('/api/domains');
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, { domains: ['a.test', 'b.test', 'c.test'] });
    assert.equal(res.headers.get('cache-control'), 'no-store');
    assert.deepEqual(((await api('/ui-config.json')).json as { domains: string[] }).domains, ['a.test', 'b.test', 'c.test']);
    const mailtm = (await api('/mailtm/domains', { headers: { accept: 'application/json' } })).json as { domain: string; isActive: boolean }[];
    assert.deepEqual(
      mailtm.map((d) => d.domain),
      ['a.test', 'b.test', 'c.test'],
    );
    for (let i = 0; i < 3; i++) assert.match((await createAddress(server)).address, /@a\.test$/, 'first, every time');
  });

  it('an unknown domain keeps its 400 "Unknown domain"; a disabled one is a 400 that says it takes no new addresses', async () => {
    const unknown = await api('/api/new_address', { method: 'POST', body: { domain: 'nowhere.test' } });
    assert.equal(unknown.status, 400);
    assert.match(unknown.text, /^Unknown domain; this server accepts: a\.test, b\.test, c\.test\.$/);
    assert.match(unknown.headers.get('content-type') ?? '', /^text\/plain/);
    const kept = await createAddress(server, { name: 'kept', domain: 'b.test' });
    assert.equal((await setState(server, 'b.test', 'disabled')).status, 200);
    const disabled = await api('/api/new_address', { method: 'POST', body: { name: 'fresh', domain: 'b.test' } });
    assert.equal(disabled.status, 400);
    assert.match(disabled.text, /^The domain b\.test takes no new addresses \(it is disabled\); this server accepts: a\.test, c\.test\.$/);
    assert.deepEqual((await api('/api/domains')).json, { domains: ['a.test', 'c.test'] }, 'gone from the public list');
    const mailtm = await api('/mailtm/accounts', { method: 'POST', body: { address: 'acct@b.test', password: 'a-password-1234' }, headers: { accept: 'application/json' } });
    assert.equal(mailtm.status, 422, 'mail.tm refuses it as a domain it does not offer');
    // The existing address keeps its mail and its token.
    await sendMail(server.smtpPort, { to: [kept.address], message: message({ Subject: 'still here' }, 'hi') });
    const list = await mails(server, kept.jwt);
    assert.deepEqual(
      list.results.map((m) => m.subject),
      ['still here'],
    );
    assert.equal((await rcpt(server, 'nobody@b.test')).code, 550, 'an unknown name at it is refused as ever');
    assert.equal((await setState(server, 'b.test', 'active')).status, 200);
  });

  it('retired: mail still taken during DOMAIN_RETIRE_GRACE, then RCPT gets a permanent 550 that says the domain is retired; its token still reads the mail', async () => {
    const old = await createAddress(server, { name: 'old', domain: 'c.test' });
    assert.equal((await setState(server, 'c.test', 'retired')).status, 200);
    assert.equal((await api('/api/new_address', { method: 'POST', body: { domain: 'c.test' } })).status, 400, 'no new addresses');
    await sendMail(server.smtpPort, { to: [old.address], message: message({ Subject: 'in the grace' }, 'hi') });
    clock.advance(2 * DAY + 1000);
    const refused = await rcpt(server, old.address);
    assert.equal(refused.code, 550);
    assert.match(refused.text, /^550 5\.1\.2 The domain c\.test is retired and takes no more mail/);
    assert.equal((await rcpt(server, 'anyone@c.test')).code, 550);
    const list = await mails(server, old.jwt);
    assert.deepEqual(
      list.results.map((m) => m.subject),
      ['in the grace'],
      'the token still reads it',
    );
    assert.equal((await api('/api/settings', { jwt: old.jwt })).status, 200);
    // Made active again, it takes mail at once.
    assert.equal((await setState(server, 'c.test', 'active')).status, 200);
    assert.equal((await rcpt(server, old.address)).code, 250);
  });

  it('deleted: SMTP no longer takes mail for the domain, and it is no longer offered', async () => {
    await adminRequest(server, '/api/admin/domains', { method: 'POST', body: { domain: 'gone.test' } });
    const before = await createAddress(server, { name: 'before', domain: 'gone.test' });
    assert.equal((await rcpt(server, before.address)).code, 250);
    assert.equal((await adminRequest(server, '/api/admin/domains/gone.test', { method: 'DELETE' })).status, 200);
    const refused = await rcpt(server, before.address);
    assert.equal(refused.code, 550);
    assert.match(refused.text, /^550 5\.1\.1 /);
    assert.ok(!((await api('/api/domains')).json as { domains: string[] }).domains.includes('gone.test'));
    assert.match((await api('/api/new_address', { method: 'POST', body: { domain: 'gone.test' } })).text, /^Unknown domain/);
  });

  it('a domain added through the admin API takes addresses and mail at once', async () => {
    assert.equal((await adminRequest(server, '/api/admin/domains', { method: 'POST', body: { domain: 'fresh.test' } })).status, 201);
    const made = await createAddress(server, { name: 'first', domain: 'fresh.test' });
    assert.equal(made.address, 'first@fresh.test');
    await sendMail(server.smtpPort, { to: [made.address], message: message({ Subject: 'new domain' }, 'hi') });
    assert.equal((await mails(server, made.jwt)).count, 1);
  });
});

describe('domain pool: DOMAIN_SELECTION', () => {
  let roundRobin: TestServer;
  let random: TestServer;
  before(async () => {
    roundRobin = await startTestServer({ ADMIN_TOKEN, MAIL_DOMAINS: 'r1.test,r2.test,r3.test', DOMAIN_SELECTION: 'round-robin' });
    random = await startTestServer({ ADMIN_TOKEN, MAIL_DOMAINS: 's1.test,s2.test,s3.test', DOMAIN_SELECTION: 'random' });
  });
  after(async () => {
    await roundRobin.close();
    await random.close();
  });
  const domainOf = (address: string) => address.slice(address.indexOf('@') + 1);

  it('round-robin gives each active domain in turn, skipping a disabled one', async () => {
    const got: string[] = [];
    for (let i = 0; i < 6; i++) got.push(domainOf((await createAddress(roundRobin)).address));
    assert.deepEqual(got, ['r1.test', 'r2.test', 'r3.test', 'r1.test', 'r2.test', 'r3.test']);
    await setState(roundRobin, 'r2.test', 'disabled');
    const after: string[] = [];
    for (let i = 0; i < 4; i++) after.push(domainOf((await createAddress(roundRobin)).address));
    assert.ok(!after.includes('r2.test'), after.join());
    assert.deepEqual(new Set(after), new Set(['r1.test', 'r3.test']));
    const listed = (await adminRequest(roundRobin, '/api/admin/domains')).json as { selection: string };
    assert.equal(listed.selection, 'round-robin');
  });

  it('random gives the active domains only, each of them over enough picks', async () => {
    await setState(random, 's3.test', 'retired');
    const seen = new Set<string>();
    for (let i = 0; i < 40; i++) seen.add(domainOf((await createAddress(random)).address));
    assert.deepEqual([...seen].sort(), ['s1.test', 's2.test'], '1 in 2^39 to miss one by chance');
  });

  it('with no active domain left, a new address without a domain is a plain-text 503 that says so', async () => {
    await setState(random, 's1.test', 'disabled');
    await setState(random, 's2.test', 'disabled');
    const res = await request(random.httpUrl, '/api/new_address', { method: 'POST', body: {} });
    assert.equal(res.status, 503);
    assert.match(res.text, /^This server has no domain that takes new addresses right now; try again later\.$/);
    assert.deepEqual((await request(random.httpUrl, '/api/domains')).json, { domains: [] });
  });
});

describe('domain pool: random subdomains', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ ADMIN_TOKEN, MAIL_DOMAINS: 'sub.test,plain.test', MAIL_SUBDOMAINS: 'sub.test' });
  });
  after(async () => {
    await server.close();
  });
  const api = (path: string, opts?: Parameters<typeof request>[2]) => client(server)(path, opts);

  it('a new address at a domain with subdomains gets name@<4-6 char label>.<domain>; mail sent by SMTP is read with its token and no other', async () => {
    const a = await createAddress(server);
    assert.match(a.address, /^[a-z0-9]{10}@[a-z][a-z0-9]{3,5}\.sub\.test$/);
    const named = await createAddress(server, { name: 'alice', domain: 'sub.test' });
    assert.match(named.address, /^alice@[a-z][a-z0-9]{3,5}\.sub\.test$/, 'a chosen name gets a label too');
    const plain = await createAddress(server, { domain: 'plain.test' });
    assert.match(plain.address, /^[a-z0-9]{10}@plain\.test$/, 'a domain without the flag is as ever');
    await sendMail(server.smtpPort, { to: [a.address], message: message({ Subject: 'to the subdomain' }, 'secret') });
    const list = await mails(server, a.jwt);
    assert.deepEqual(
      list.results.map((m) => m.subject),
      ['to the subdomain'],
    );
    const uuid = list.results[0]!.uuid;
    assert.equal((await api(`/api/mail/${uuid}`, { jwt: a.jwt })).status, 200);
    assert.equal((await mails(server, named.jwt)).count, 0, "another address's token lists nothing");
    assert.equal((await api(`/api/mail/${uuid}`, { jwt: named.jwt })).status, 404, "and cannot read it");
  });

  it('SMTP takes the exact addresses made at a subdomain only: another label, another name, two labels and the flagless domain are refused', async () => {
    const a = await createAddress(server, { name: 'bob' });
    const [, host] = a.address.split('@') as [string, string];
    const label = host.slice(0, host.indexOf('.'));
    assert.equal((await rcpt(server, a.address)).code, 250);
    assert.equal((await rcpt(server, `BOB@${host.toUpperCase()}`)).code, 250, 'case-insensitive');
    const other = label === 'zzzz' ? 'yyyy' : 'zzzz';
    for (const to of [`bob@${other}.sub.test`, `carol@${host}`, `bob@x.${host}`, `bob@${label}.plain.test`, 'bob@sub.test']) {
      const r = await rcpt(server, to);
      assert.equal(r.code, 550, `${to}: ${r.text}`);
      assert.match(r.text, /^550 5\.1\.1 /);
    }
  });

  it('an explicit subdomain is taken as asked; mail.tm accounts are the address asked for; turning the flag off stops new labels and subdomain mail', async () => {
    const exact = await createAddress(server, { name: 'dave', domain: 'k3x9.sub.test' });
    assert.equal(exact.address, 'dave@k3x9.sub.test');
    const bad = await api('/api/new_address', { method: 'POST', body: { domain: 'k3x9.plain.test' } });
    assert.equal(bad.status, 400, 'no subdomains of a flagless domain');
    const account = await api('/mailtm/accounts', { method: 'POST', body: { address: 'erin@sub.test', password: 'a-password-1234' }, headers: { accept: 'application/json' } });
    assert.equal(account.status, 201, account.text);
    assert.equal((account.json as { address: string }).address, 'erin@sub.test');
    const off = await adminRequest(server, '/api/admin/domains/sub.test', { method: 'PATCH', body: { subdomains: false } });
    assert.equal((off.json as { subdomains: boolean }).subdomains, false);
    assert.match((await createAddress(server)).address, /@sub\.test$/, 'no label any more');
    assert.equal((await rcpt(server, exact.address)).code, 550, 'subdomain mail is no longer taken');
  });
});

describe('domain pool: GET /api/domains is rate limited per client (RATE_LIMIT_SETTINGS)', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ RATE_LIMIT_SETTINGS: '2/60' });
  });
  after(async () => {
    await server.close();
  });

  it('the third request in the window is a plain-text 429 with Retry-After', async () => {
    assert.equal((await request(server.httpUrl, '/api/domains')).status, 200);
    assert.equal((await request(server.httpUrl, '/api/domains')).status, 200);
    const limited = await request(server.httpUrl, '/api/domains');
    assert.equal(limited.status, 429);
    assert.ok(Number(limited.headers.get('retry-after')) > 0);
    assert.match(limited.headers.get('content-type') ?? '', /^text\/plain/);
  });
});
