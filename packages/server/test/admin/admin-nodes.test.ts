// The admin on several nodes (two on one PostgreSQL database and one Redis;
// docs/decisions.md "Blocks"): a block made through one node is honoured by the other
// within the block list's refresh (REFRESH_MS, read from the database), and at once by
// the node it was made on; its removal likewise. Addresses, mail and statistics read
// through either node are the same.
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { REFRESH_MS } from '../../src/blocks/block-list.js';
import { ADMIN_TOKEN, adminRequest } from '../helpers/admin.js';
import { createAddress, message, sendMail, SmtpClient, type TestServer } from '../helpers/harness.js';
import { twoNodes } from '../helpers/nodes.js';
import { skipUnless } from '../helpers/services.js';

// Without PostgreSQL or Redis the cases are registered as skipped, with the reason.
const skip = skipUnless('postgres', 'redis');

/** The reply to MAIL FROM:<sender> on a node. */
async function mailFrom(node: TestServer, sender: string): Promise<string> {
  const smtp = await SmtpClient.connect(node.smtpPort);
  try {
    await smtp.command('EHLO nodes.test');
    return (await smtp.command(`MAIL FROM:<${sender}>`)).text.trim();
  } finally {
    await smtp.quit();
  }
}

/** Polls a node's MAIL FROM until its reply matches; the milliseconds it took. */
async function until(node: TestServer, sender: string, want: RegExp, limitMs: number): Promise<number> {
  const started = Date.now();
  for (;;) {
    const reply = await mailFrom(node, sender);
    if (want.test(reply)) return Date.now() - started;
    if (Date.now() - started > limitMs) assert.fail(`after ${limitMs} ms the reply is still ${reply}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('admin on two nodes (PostgreSQL + Redis)', () => {
  const nodes = twoNodes('adm', skip, { ADMIN_TOKEN });
  let a: TestServer;
  let b: TestServer;
  before(() => {
    if (skip) return;
    ({ a, b } = nodes);
  });

  it('a block made on one node refuses mail on the other within the refresh, and on its own node at once', { skip }, async () => {
    // Both nodes have read the (empty) list: the block below is news to the other one.
    assert.match(await mailFrom(a, 'x@spam-nodes.example'), /^250 /);
    assert.match(await mailFrom(b, 'x@spam-nodes.example'), /^250 /);
    const made = await adminRequest(a, '/api/admin/blocks', { body: { kind: 'domain', value: 'spam-nodes.example' } });
    assert.equal(made.status, 200, made.text);
    assert.match(await mailFrom(a, 'x@spam-nodes.example'), /^550 5\.7\.1 /, 'at once on the node that made it');
    const took = await until(b, 'y@spam-nodes.example', /^550 5\.7\.1 /, REFRESH_MS + 4000);
    assert.ok(took <= REFRESH_MS + 4000, `${took} ms`);
    // The other node lists it too.
    assert.deepEqual((await adminRequest(b, '/api/admin/blocks')).json.results.map((x: { value: string }) => x.value), ['spam-nodes.example']);

    // Removed through the other node: accepted there at once, and on the first within the refresh.
    assert.equal((await adminRequest(b, `/api/admin/blocks/${made.json.id}`, { method: 'DELETE' })).status, 200);
    assert.match(await mailFrom(b, 'x@spam-nodes.example'), /^250 /);
    await until(a, 'x@spam-nodes.example', /^250 /, REFRESH_MS + 4000);
  });

  it('an IP block made on one node refuses that client on the other', { skip }, async () => {
    const made = await adminRequest(b, '/api/admin/blocks', { body: { kind: 'ip', value: '127.0.0.0/8' } });
    assert.equal(made.status, 200, made.text);
    await until(a, 'anyone@fine.example', /^550 5\.7\.1 /, REFRESH_MS + 4000);
    assert.equal((await adminRequest(a, `/api/admin/blocks/${made.json.id}`, { method: 'DELETE' })).status, 200);
    await until(b, 'anyone@fine.example', /^250 /, REFRESH_MS + 4000);
  });

  it('shows the same addresses, mail and statistics through either node', { skip }, async () => {
    const made = await adminRequest(a, '/api/admin/addresses', { body: { name: 'nodes-admin' } });
    assert.equal(made.status, 200, made.text);
    const other = await createAddress(b, { name: 'nodes-other' });
    await sendMail(b.smtpPort, { from: 'multi@sender.example', to: [made.json.address, other.address], message: message({ Subject: 'on b' }, 'x') });
    await sendMail(a.smtpPort, { from: 'multi@sender.example', to: [made.json.address], message: message({ Subject: 'on a' }, 'x') });
    const onA = await adminRequest(a, '/api/admin/addresses?q=nodes-&limit=10&offset=0');
    const onB = await adminRequest(b, '/api/admin/addresses?q=nodes-&limit=10&offset=0');
    assert.deepEqual(onA.json, onB.json);
    assert.deepEqual(
      onA.json.results.map((x: { address: string; mails: number }) => [x.address.split('@')[0], x.mails]),
      [
        ['nodes-other', 1],
        ['nodes-admin', 2],
      ],
    );
    const id = onA.json.results[1].id as number;
    const mails = await adminRequest(b, `/api/admin/addresses/${id}/mails?limit=10&offset=0`);
    assert.deepEqual(mails.json.results.map((m: { metadata: string }) => JSON.parse(m.metadata).subject), ['on a', 'on b']);
    const statsA = (await adminRequest(a, '/api/admin/stats')).json;
    const statsB = (await adminRequest(b, '/api/admin/stats')).json;
    // The database's size may move between two reads (autovacuum adds its maps); the rest may not.
    const counts = (st: any) => ({ ...st, storage: { ...st.storage, database_bytes: 0 } });
    assert.deepEqual(counts(statsA), counts(statsB));
    assert.equal(statsA.mails_per_day.at(-1).mails, 3, 'the mails of both nodes, counted on their days');
    assert.deepEqual(statsA.top_senders[0], { sender: 'multi@sender.example', mails: 3 });
    // Deleted on one node: gone on the other.
    assert.equal((await adminRequest(b, `/api/admin/addresses/${id}`, { method: 'DELETE' })).status, 200);
    assert.equal((await adminRequest(a, `/api/admin/addresses/${id}/mails?limit=10&offset=0`)).status, 404);
  });
});
