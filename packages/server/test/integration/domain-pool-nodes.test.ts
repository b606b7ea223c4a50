// The domain pool on two nodes (one PostgreSQL database, one Redis; docs/operating.md
// "Domains and rotation"): MAIL_DOMAINS seeds the pool once for both; a domain added, disabled,
// retired or deleted through one node applies on the other within the pool's refresh
// (REFRESH_MS, read from the database) without a restart, and at once on the node it was
// changed on; a restart with another MAIL_DOMAINS leaves the pool as the admin made it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { REFRESH_MS } from '../../src/mail/domain-pool.js';
import { ADMIN_TOKEN, adminRequest } from '../helpers/admin.js';
import { createAddress, message, request, sendMail, SmtpClient, startTestServer, type TestServer } from '../helpers/harness.js';
import { twoNodes } from '../helpers/nodes.js';
import { skipUnless } from '../helpers/services.js';

// Without PostgreSQL or Redis the cases are registered as skipped, with the reason.
const skip = skipUnless('postgres', 'redis');

/** Polls `probe` until it returns true; the milliseconds it took (fails past `limitMs`). */
async function until(what: string, probe: () => Promise<boolean>, limitMs = REFRESH_MS * 5): Promise<number> {
  const started = Date.now();
  while (!(await probe())) {
    if (Date.now() - started > limitMs) assert.fail(`after ${limitMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return Date.now() - started;
}

const newAddress = (node: TestServer, body: Record<string, unknown>) => request(node.httpUrl, '/api/new_address', { method: 'POST', body });

async function rcptCode(node: TestServer, to: string): Promise<number> {
  const smtp = await SmtpClient.connect(node.smtpPort);
  try {
    await smtp.command('EHLO nodes.test');
    await smtp.command('MAIL FROM:<sender@example.com>');
    return (await smtp.command(`RCPT TO:<${to}>`)).code;
  } finally {
    await smtp.quit();
  }
}

describe('domain pool on two nodes (PostgreSQL + Redis)', () => {
  const nodes = twoNodes('pool', skip, { ADMIN_TOKEN, MAIL_DOMAINS: 'seed.test', DOMAIN_RETIRE_GRACE: '1s' });

  it('a domain added through node A takes new addresses and mail on node B without a restart', { skip }, async () => {
    const { a, b } = nodes;
    assert.equal((await newAddress(b, { domain: 'added.test' })).status, 400, 'B does not know it yet');
    assert.equal((await adminRequest(a, '/api/admin/domains', { method: 'POST', body: { domain: 'added.test' } })).status, 201);
    assert.equal((await newAddress(a, { name: 'on-a', domain: 'added.test' })).status, 200, 'at once on A');
    await until('B takes addresses at added.test', async () => (await newAddress(b, { name: 'on-b', domain: 'added.test' })).status === 200);
    assert.deepEqual((await request(b.httpUrl, '/api/domains')).json, { domains: ['seed.test', 'added.test'] });
    await sendMail(b.smtpPort, { to: ['on-a@added.test'], message: message({ Subject: 'via b' }, 'hi') });
    const listedOnB = (await adminRequest(b, '/api/admin/domains')).json as { domains: { domain: string }[] };
    assert.deepEqual(
      listedOnB.domains.map((d) => d.domain),
      ['seed.test', 'added.test'],
      'one pool, seeded once',
    );
  });

  it('disabled on A: B gives no new address there, its existing addresses keep mail and tokens', { skip }, async () => {
    const { a, b } = nodes;
    const kept = await createAddress(b, { name: 'kept', domain: 'added.test' });
    assert.equal((await adminRequest(a, '/api/admin/domains/added.test', { method: 'PATCH', body: { state: 'disabled' } })).status, 200);
    await until('B refuses new addresses at added.test', async () => (await newAddress(b, { domain: 'added.test' })).status === 400);
    assert.equal(await rcptCode(b, kept.address), 250);
    await sendMail(b.smtpPort, { to: [kept.address], message: message({ Subject: 'after disable' }, 'hi') });
    const list = await request(a.httpUrl, '/api/mails?limit=10&offset=0', { jwt: kept.jwt });
    assert.equal((list.json as { count: number }).count, 1, 'read through A with its token');
  });

  it('retired on B: after the grace both nodes refuse its mail with 550; deleted: no mail at all', { skip }, async () => {
    const { a, b } = nodes;
    const old = await createAddress(a, { name: 'old', domain: 'seed.test' });
    assert.equal((await adminRequest(b, '/api/admin/domains/seed.test', { method: 'PATCH', body: { state: 'retired' } })).status, 200);
    await until('A refuses mail to seed.test once the grace of 1 s is over', async () => (await rcptCode(a, old.address)) === 550);
    assert.equal(await rcptCode(b, old.address), 550);
    assert.equal((await request(b.httpUrl, '/api/settings', { jwt: old.jwt })).status, 200, 'its token still works');
    assert.equal((await adminRequest(a, '/api/admin/domains/added.test', { method: 'DELETE' })).status, 200);
    await until('B takes no mail for the deleted domain', async () => (await rcptCode(b, 'kept@added.test')) === 550);
  });

  it('a node started later with another MAIL_DOMAINS leaves the pool as the admin made it', { skip }, async () => {
    const c = await startTestServer({ ...nodes.env, MAIL_DOMAINS: 'other.test' });
    try {
      const listed = (await adminRequest(c, '/api/admin/domains')).json as { domains: { domain: string; state: string }[] };
      assert.deepEqual(
        listed.domains.map((d) => [d.domain, d.state]),
        [['seed.test', 'retired']],
      );
      assert.equal((await newAddress(c, { domain: 'other.test' })).status, 400);
    } finally {
      await c.close();
    }
  });
});

describe('random subdomains on two nodes (PostgreSQL + Redis)', () => {
  const nodes = twoNodes('poolsub', skip, { ADMIN_TOKEN, MAIL_DOMAINS: 'seed.test' });

  it('turned on through A: B gives random subdomains, either node takes their mail for exactly those addresses, each token reads its own', { skip }, async () => {
    const { a, b } = nodes;
    assert.equal((await adminRequest(a, '/api/admin/domains', { method: 'POST', body: { domain: 'wild.test', subdomains: true } })).status, 201);
    await until('B gives addresses at wild.test', async () => (await newAddress(b, { domain: 'wild.test' })).status === 200);
    const one = await createAddress(b, { name: 'one', domain: 'wild.test' });
    const two = await createAddress(b, { name: 'two', domain: 'wild.test' });
    const label = /^one@([a-z][a-z0-9]{3,5})\.wild\.test$/.exec(one.address)?.[1];
    assert.ok(label, `a random one-label subdomain: ${one.address}`);
    assert.equal(await rcptCode(a, one.address), 250, 'A takes mail for the address made on B');
    assert.equal(await rcptCode(a, `nobody@${label}.wild.test`), 550, "another name at the same label");
    assert.equal(await rcptCode(a, `one@x.${label}.wild.test`), 550, 'two labels');
    await sendMail(a.smtpPort, { to: [one.address], message: message({ Subject: 'to one' }, 'hi') });
    const mails = async (node: TestServer, jwt: string) => ((await request(node.httpUrl, '/api/mails?limit=10&offset=0', { jwt })).json as { count: number }).count;
    assert.equal(await mails(b, one.jwt), 1, 'read through B with its token');
    assert.equal(await mails(a, two.jwt), 0, "the other address's token reads nothing of it");
  });
});
