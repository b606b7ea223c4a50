// Names are never given out again (docs/decisions.md "Deleted address"): a deleted or an
// expired address leaves a tombstone, a keyed hash of the address, and POST /api/new_address
// (and mail.tm's POST /accounts) with its name is refused with a message of its own; across
// a restart on the same data dir and across two nodes on PostgreSQL; for ADDRESS_TOMBSTONE_TTL
// when it is set; until the operators purge it. The database is read directly.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { RETIRED_NAME_MESSAGE } from '../../src/domain/tombstones.js';
import { ADMIN_TOKEN, adminRequest } from '../helpers/admin.js';
import { createAddress, DOMAIN, request, sendMail, startTestServer, testClock, tmp, until, type TestServer } from '../helpers/harness.js';
import { twoNodes } from '../helpers/nodes.js';
import { PG_URL, skipUnless } from '../helpers/services.js';

const HOUR = 3_600_000;
const TAKEN = 'That address is already taken; choose another name or omit "name" for a random one.';

const newAddress = (server: { httpUrl: string }, name: string) => request(server.httpUrl, '/api/new_address', { method: 'POST', body: { name } });
const deleteAddress = (server: { httpUrl: string }, jwt: string) => request(server.httpUrl, '/api/delete_address', { method: 'DELETE', jwt });

/** The rows of address_tombstones, read by a connection of the test's own. */
function sqliteTombstones(dataDir: string): { key: string; deleted_at: number }[] {
  const db = new Database(join(dataDir, 'temp-inbox.sqlite'), { readonly: true });
  try {
    return db.prepare('SELECT key, deleted_at FROM address_tombstones').all() as { key: string; deleted_at: number }[];
  } finally {
    db.close();
  }
}

function assertRetired(res: { status: number; text: string; headers: Headers }, what: string): void {
  assert.equal(res.status, 409, `${what}: ${res.status} ${res.text}`);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
  assert.equal(res.text, RETIRED_NAME_MESSAGE, what);
}

describe('address tombstones: a deleted or expired name is not given out again', () => {
  const clock = testClock();
  let server: TestServer;
  let dataDir: string;
  before(async () => {
    dataDir = tmp('temp-inbox-tombstones-');
    server = await startTestServer({ ADMIN_TOKEN, MAILTM_API: 'on', SWEEP_INTERVAL: '1s', ADDRESS_TTL: '1h' }, dataDir, undefined, { now: clock.now });
  });
  after(async () => server?.close());

  it('a deleted name is 409 with its own message; a live one is "taken"; another name is free', async () => {
    const live = await createAddress(server, { name: 'still-here' });
    const taken = await newAddress(server, 'still-here');
    assert.equal(taken.status, 409);
    assert.equal(taken.text, TAKEN);

    const gone = await createAddress(server, { name: 'Reset-Me' });
    assert.equal((await deleteAddress(server, gone.jwt)).status, 200);
    assertRetired(await newAddress(server, 'reset-me'), 'the same name');
    assertRetired(await newAddress(server, 'RESET-ME'), 'the same name in capitals');
    assert.equal((await newAddress(server, 'reset-me-2')).status, 200);
    assert.equal((await request(server.httpUrl, '/api/settings', { jwt: live.jwt })).status, 200);
    // Mail to it is refused like any unknown address's (nobody holds it).
    await assert.rejects(sendMail(server.smtpPort, { to: [gone.address], message: 'Subject: reset\r\n\r\nyour link\r\n' }), /550 5\.1\.1/);
  });

  it('an expired name, purged by the retention sweep, is 409 too', async () => {
    const old = await createAddress(server, { name: 'expiring' });
    clock.advance(HOUR + 1000);
    const addresses = () => new Database(join(dataDir, 'temp-inbox.sqlite'), { readonly: true });
    await until('the sweep purged the expired address', () => {
      const db = addresses();
      try {
        return db.prepare('SELECT count(*) FROM addresses WHERE address = ?').pluck().get(old.address) === 0;
      } finally {
        db.close();
      }
    });
    assertRetired(await newAddress(server, 'expiring'), 'the expired name');
  });

  it('mail.tm POST /accounts with a retired name is 422 with the same message, not "already used"', async () => {
    const gone = await createAddress(server, { name: 'mailtm-gone' });
    await deleteAddress(server, gone.jwt);
    const res = await request(server.httpUrl, '/mailtm/accounts', { method: 'POST', body: { address: gone.address, password: 'a password 123' }, headers: { accept: 'application/json' } });
    assert.equal(res.status, 422, res.text);
    assert.deepEqual(
      res.json.violations.map((v: { propertyPath: string; message: string }) => [v.propertyPath, v.message]),
      [['address', RETIRED_NAME_MESSAGE]],
    );
    const free = await request(server.httpUrl, '/mailtm/accounts', { method: 'POST', body: { address: `mailtm-new@${DOMAIN}`, password: 'a password 123' }, headers: { accept: 'application/json' } });
    assert.equal(free.status, 201, free.text);
  });

  it('the tombstones hold a keyed hash, never the address or its name', async () => {
    const rows = sqliteTombstones(dataDir);
    assert.ok(rows.length >= 3, `${rows.length} tombstones`);
    const columns = new Database(join(dataDir, 'temp-inbox.sqlite'), { readonly: true });
    try {
      const names = (columns.prepare("SELECT name FROM pragma_table_info('address_tombstones')").pluck().all() as string[]).sort();
      assert.deepEqual(names, ['deleted_at', 'key']);
    } finally {
      columns.close();
    }
    for (const row of rows) {
      assert.match(row.key, /^[0-9a-f]{64}$/);
      for (const plain of ['reset-me', 'expiring', 'mailtm-gone', DOMAIN]) assert.ok(!row.key.includes(plain));
    }
  });

  it('the name is still retired after a restart on the same data dir', async () => {
    await server.close({ keepData: true });
    server = await startTestServer({ ADMIN_TOKEN, MAILTM_API: 'on', SWEEP_INTERVAL: '1s', ADDRESS_TTL: '1h' }, dataDir, undefined, { now: clock.now });
    assertRetired(await newAddress(server, 'reset-me'), 'after the restart');
  });

  it('DELETE /api/admin/tombstones?address= frees one name; without it, every name; bad input is 400; the admin token is needed', async () => {
    assert.equal((await request(server.httpUrl, '/api/admin/tombstones', { method: 'DELETE' })).status, 401);
    const bad = await adminRequest(server, '/api/admin/tombstones?address=not-an-address', { method: 'DELETE' });
    assert.equal(bad.status, 400);
    assert.match(bad.headers.get('content-type') ?? '', /^text\/plain/);
    const before = sqliteTombstones(dataDir).length;
    const one = await adminRequest(server, `/api/admin/tombstones?address=${encodeURIComponent(`Reset-Me@${DOMAIN}`)}`, { method: 'DELETE' });
    assert.equal(one.status, 200, one.text);
    assert.deepEqual(one.json, { success: true, purged: 1 });
    assert.equal(sqliteTombstones(dataDir).length, before - 1);
    assert.equal((await newAddress(server, 'reset-me')).status, 200, 'the purged name is free');
    assertRetired(await newAddress(server, 'expiring'), 'another stays retired');
    const all = await adminRequest(server, '/api/admin/tombstones', { method: 'DELETE' });
    assert.deepEqual(all.json, { success: true, purged: before - 1 });
    assert.equal(sqliteTombstones(dataDir).length, 0);
    assert.equal((await newAddress(server, 'expiring')).status, 200);
  });
});

describe('address tombstones: ADDRESS_TOMBSTONE_TTL frees the name after it', () => {
  const clock = testClock();
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ ADDRESS_TOMBSTONE_TTL: '2h', SWEEP_INTERVAL: '200ms' }, undefined, undefined, { now: clock.now });
  });
  after(async () => server?.close());

  it('refused within the time, free after it, and the sweep then removes the tombstone', async () => {
    const gone = await createAddress(server, { name: 'short-lived' });
    await deleteAddress(server, gone.jwt);
    clock.advance(2 * HOUR - 1000);
    assertRetired(await newAddress(server, 'short-lived'), 'just inside the time');
    assert.equal(sqliteTombstones(server.dataDir).length, 1);
    clock.advance(2000);
    await until('the sweep removed the expired tombstone', () => sqliteTombstones(server.dataDir).length === 0);
    const again = await newAddress(server, 'short-lived');
    assert.equal(again.status, 200, again.text);
    // The old token does not open the new address.
    assert.equal((await request(server.httpUrl, '/api/settings', { jwt: gone.jwt })).status, 401);
  });
});

describe('address tombstones: random names skip a retired one', () => {
  // The server's random names come from this queue, so that one of them meets a retired name.
  const queue: string[] = [];
  const tried: string[] = [];
  let server: TestServer;
  before(async () => {
    const randomName = () => {
      const name = queue.shift() ?? 'queue-empty';
      tried.push(name);
      return name;
    };
    server = await startTestServer({}, undefined, undefined, { randomName });
  });
  after(async () => server?.close());

  it('a random name that was used before is passed over for the next one; eight retired in a row are a 409', async () => {
    const gone = await createAddress(server, { name: 'once-used' });
    assert.equal((await deleteAddress(server, gone.jwt)).status, 200);
    queue.push('once-used', 'fresh-random');
    const res = await request(server.httpUrl, '/api/new_address', { method: 'POST', body: {} });
    assert.equal(res.status, 200, res.text);
    assert.equal((res.json as { address: string }).address, `fresh-random@${DOMAIN}`);
    assert.deepEqual(tried, ['once-used', 'fresh-random'], 'the retired name was tried first and passed over');

    tried.length = 0;
    queue.push(...Array.from({ length: 8 }, () => 'once-used'), 'never-reached');
    const none = await request(server.httpUrl, '/api/new_address', { method: 'POST', body: {} });
    assert.equal(none.status, 409, none.text);
    assert.equal(none.text, 'Could not find a free random name; try again.');
    assert.equal(tried.length, 8, 'a bounded number of tries');
  });
});

const pgSkip = skipUnless('postgres', 'redis');

describe('address tombstones: two nodes on PostgreSQL', { skip: pgSkip }, () => {
  const nodes = twoNodes('tomb', pgSkip);

  it('a name deleted on one node is refused on the other; the row holds no plain address', async () => {
    const gone = await createAddress(nodes.a, { name: 'two-nodes' });
    assert.equal((await deleteAddress(nodes.a, gone.jwt)).status, 200);
    assertRetired(await newAddress(nodes.b, 'two-nodes'), 'on node b');
    assertRetired(await newAddress(nodes.a, 'two-nodes'), 'on node a');
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    try {
      const { rows } = await client.query<{ key: string }>(`SELECT * FROM "${nodes.env.DATABASE_SCHEMA}".address_tombstones`);
      assert.equal(rows.length, 1);
      assert.deepEqual(Object.keys(rows[0]!).sort(), ['deleted_at', 'key']);
      assert.match(rows[0]!.key, /^[0-9a-f]{64}$/);
    } finally {
      await client.end();
    }
  });

  it('a deletion on one node and a create of the name on the other at once: the create never gets it', async () => {
    for (let i = 0; i < 20; i++) {
      const name = `race-${i}`;
      const held = await createAddress(nodes.a, { name });
      const [deleted, created] = await Promise.all([deleteAddress(nodes.a, held.jwt), newAddress(nodes.b, name)]);
      assert.equal(deleted.status, 200);
      // Before the deletion commits it is taken, after it retired: 409 either way.
      assert.equal(created.status, 409, `${name}: ${created.status} ${created.text}`);
      assertRetired(await newAddress(nodes.b, name), `${name} afterwards`);
    }
  });
});

describe('address tombstones: the catch-all does not bring a retired name back', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ CATCH_ALL: 'true' });
  });
  after(async () => server?.close());

  it('mail to a retired name is refused at RCPT and creates nothing; another name is caught', async () => {
    const gone = await createAddress(server, { name: 'caught-once' });
    await deleteAddress(server, gone.jwt);
    await assert.rejects(sendMail(server.smtpPort, { to: [gone.address], message: 'Subject: again\r\n\r\nx\r\n' }), /550 5\.1\.1/);
    assertRetired(await newAddress(server, 'caught-once'), 'still retired');
    const sent = await sendMail(server.smtpPort, { to: [`never-made@${DOMAIN}`], message: 'Subject: new\r\n\r\nx\r\n' });
    assert.equal(sent.code, 250);
    assert.equal((await newAddress(server, 'never-made')).status, 200, 'the caught address is claimed');
  });
});
