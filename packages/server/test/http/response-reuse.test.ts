// Reused read responses (http/response-cache.ts) must never be stale: every
// change to an inbox — a delivery, a deletion, a clear, a sweep, a write by
// another process on the same SQLite file — shows on the very next request.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { openSqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import { SQLITE_FILE } from '../../src/storage/index.js';
import { createResponseCache } from '../../src/http/response-cache.js';
import { client, createAddress, message, sendMail, SmtpClient, startTestServer, testClock, type TestServer } from '../helpers/harness.js';

describe('response reuse: never stale', () => {
  let server: TestServer;
  let get: ReturnType<typeof client>;
  before(async () => {
    server = await startTestServer();
    get = client(server);
  });
  after(() => server.close());

  const send = async (to: string, subject: string) => {
    const res = await sendMail(server.smtpPort, { to: [to], message: message({ From: 'a@example.com', To: to, Subject: subject }, 'body') });
    assert.equal(res.code, 250, res.text);
  };
  const list = async (jwt: string, limit = 20, offset = 0) => {
    const res = await get(`/api/mails?limit=${limit}&offset=${offset}`, { jwt });
    assert.equal(res.status, 200, res.text);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json; charset=utf-8/);
    return res.json as { results: { uuid: string; metadata: string }[]; count: number };
  };
  const subjects = (page: { results: { metadata: string }[] }) => page.results.map((r) => (JSON.parse(r.metadata) as { subject: string }).subject);

  it('a delivery, a delete and a clear each show on the next request', async () => {
    const { address, jwt } = await createAddress(server);
    assert.deepEqual(await list(jwt), { results: [], count: 0 });
    assert.deepEqual(await list(jwt), { results: [], count: 0 });
    await send(address, 'one');
    assert.deepEqual(subjects(await list(jwt)), ['one']);
    await send(address, 'two');
    const page = await list(jwt);
    assert.deepEqual(subjects(page), ['two', 'one']);
    assert.equal(page.count, 2);
    // A second page size is a separate entry, and is fresh too.
    assert.deepEqual(subjects(await list(jwt, 1, 1)), ['one']);

    const mailUrl = `/api/mail/${page.results[0]!.uuid}`;
    assert.equal((await get(mailUrl, { jwt })).status, 200);
    assert.equal((await get(mailUrl, { jwt })).status, 200);
    assert.equal((await get(`/api/mails/${page.results[0]!.uuid}`, { method: 'DELETE', jwt })).status, 200);
    assert.equal((await get(mailUrl, { jwt })).status, 404);
    assert.deepEqual(subjects(await list(jwt)), ['one']);
    assert.deepEqual(subjects(await list(jwt, 1, 1)), []);

    assert.equal((await get('/api/clear_inbox', { method: 'DELETE', jwt })).status, 200);
    assert.deepEqual(await list(jwt), { results: [], count: 0 });
  });

  it('one address\'s reused page is never served to another', async () => {
    const a = await createAddress(server);
    const b = await createAddress(server);
    await send(a.address, 'for a');
    assert.deepEqual(subjects(await list(a.jwt)), ['for a']);
    assert.deepEqual(subjects(await list(b.jwt)), []);
    await send(b.address, 'for b');
    assert.deepEqual(subjects(await list(b.jwt)), ['for b']);
    assert.deepEqual(subjects(await list(a.jwt)), ['for a']);
  });

  it('a deleted address\'s token stops working at once, reused page or not', async () => {
    const { address, jwt } = await createAddress(server);
    await send(address, 'x');
    await list(jwt);
    assert.equal((await get('/api/delete_address', { method: 'DELETE', jwt })).status, 200);
    assert.equal((await get('/api/mails?limit=20&offset=0', { jwt })).status, 401);
  });

  it('mail purged by the retention sweep is gone on the next request', async () => {
    // A server of its own on a clock the test moves: MAIL_TTL passes at once.
    const clock = testClock();
    const own = await startTestServer({ MAIL_TTL: '1h', SWEEP_INTERVAL: '1d' }, undefined, undefined, { now: clock.now });
    try {
      const { address, jwt } = await createAddress(own);
      await sendMail(own.smtpPort, { to: [address], message: message({ Subject: 'short-lived' }, 'body') });
      const page = () => client(own)('/api/mails?limit=20&offset=0', { jwt });
      assert.deepEqual(subjects((await page()).json), ['short-lived']);
      assert.deepEqual(subjects((await page()).json), ['short-lived'], 'the page is kept');
      clock.advance(3_600_000 + 1);
      // Past MAIL_TTL but not yet swept: still listed (retention is enforced by the sweep).
      assert.deepEqual(subjects((await page()).json), ['short-lived']);
      assert.deepEqual(await own.mail.sweep(), { mails: 1, addresses: 0, sessions: 0 });
      assert.deepEqual((await page()).json, { results: [], count: 0 });
    } finally {
      await own.close();
    }
  });

  it('a recipient is refused at once after its address is deleted, here or by another process', async () => {
    const rcpt = async (address: string) => {
      const smtp = await SmtpClient.connect(server.smtpPort);
      try {
        await smtp.command('EHLO reuse.test');
        await smtp.command('MAIL FROM:<x@example.com>');
        return (await smtp.command(`RCPT TO:<${address}>`)).code;
      } finally {
        await smtp.quit();
      }
    };
    // Each address has had mail delivered (so its look-up is remembered) before it goes.
    const here = await createAddress(server);
    await send(here.address, 'before');
    assert.equal(await rcpt(here.address), 250);
    assert.equal((await client(server)('/api/delete_address', { method: 'DELETE', jwt: here.jwt })).status, 200);
    assert.equal(await rcpt(here.address), 550, 'deleted through the API');

    const elsewhere = await createAddress(server);
    await send(elsewhere.address, 'before');
    assert.equal(await rcpt(elsewhere.address), 250);
    const other = openSqliteStore(join(server.dataDir, 'temp-inbox.sqlite'));
    try {
      const record = await other.findAddress(elsewhere.address);
      assert.ok(record && (await other.deleteAddress(record.id)));
    } finally {
      await other.close();
    }
    assert.equal(await rcpt(elsewhere.address), 550, 'deleted by another process');
    // Recreated under the same name: mail goes to the new address, not the old id.
    const reborn = await createAddress(server, { name: elsewhere.address.split('@')[0] });
    await send(reborn.address, 'to the new one');
    assert.deepEqual(subjects(await list(reborn.jwt)), ['to the new one']);
  });

  it('a write by another process on the same SQLite file shows on the next request', async () => {
    const { address, jwt } = await createAddress(server);
    await send(address, 'first');
    const page = await list(jwt);
    assert.deepEqual(subjects(page), ['first']);
    // A second connection stands in for another process: its commits are not this process's.
    const other = openSqliteStore(join(server.dataDir, 'temp-inbox.sqlite'));
    try {
      const record = await other.findAddress(address);
      assert.ok(record);
      const now = Date.now();
      await other.insertMails([
        {
          uuid: randomUUID(),
          addressId: record.id,
          address,
          source: 'b@example.com',
          messageId: '<other@example.com>',
          metadata: JSON.stringify({ subject: 'from elsewhere' }),
          trace: Buffer.alloc(0),
          body: { raw: Buffer.from('Subject: from elsewhere\r\n\r\nx\r\n'), attachments: [] },
          createdAt: now + 1000,
        },
      ]);
      assert.deepEqual(subjects(await list(jwt)), ['from elsewhere', 'first']);
      assert.equal(await other.softDeleteMail(record.id, page.results[0]!.uuid), true);
      assert.deepEqual(subjects(await list(jwt)), ['from elsewhere']);
      assert.equal((await get(`/api/mail/${page.results[0]!.uuid}`, { jwt })).status, 404);
    } finally {
      await other.close();
    }
  });
});

describe('response reuse: a repeated read is served from the cache', () => {
  const TOKEN = 'reuse-metrics-token';
  let server: TestServer;
  let db: Database.Database;
  /** PRAGMA data_version of this process's own read-only connection to the server's database. */
  let dataVersion: () => unknown;
  before(async () => {
    server = await startTestServer({ METRICS_TOKEN: TOKEN });
    db = new Database(join(server.dataDir, SQLITE_FILE), { readonly: true });
    const version = db.prepare('PRAGMA data_version').pluck();
    dataVersion = () => version.get();
  });
  after(async () => {
    db.close();
    await server.close();
  });

  type Outcomes = { hit: number; miss: number; off: number };
  /** temp_inbox_http_responses_reused_total for a route, by outcome, from GET /metrics. */
  const reuse = async (route: string): Promise<Outcomes> => {
    const text = (await client(server)('/metrics', { headers: { authorization: `Bearer ${TOKEN}` } })).text;
    const of = (outcome: string) => Number(new RegExp(`^temp_inbox_http_responses_reused_total\\{route="${route}",outcome="${outcome}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
    return { hit: of('hit'), miss: of('miss'), off: of('off') };
  };
  const since = (before: Outcomes, after: Outcomes): Outcomes => ({ hit: after.hit - before.hit, miss: after.miss - before.miss, off: after.off - before.off });
  /** What one request to `route` counted. */
  const counted = async <T>(route: string, read: () => Promise<T>) => {
    const before = await reuse(route);
    const answer = await read();
    return { answer, outcome: since(before, await reuse(route)) };
  };

  /**
   * `read` twice in a row, again until no connection committed to the server's database
   * between the two (as this process's own connection sees it, through data_version).
   * Any such commit makes every kept answer stale, and the server makes some by itself: the
   * checkpointing thread starts each new WAL with a commit of its own, and the search
   * index is written a moment after each delivery (docs/decisions.md "Durability",
   * "Search"). The second answer is then the one to check.
   */
  const twiceStill = async <T>(route: string, read: () => Promise<T>) => {
    for (let attempt = 1; attempt <= 20; attempt++) {
      const mark = dataVersion();
      const first = await read();
      const second = await counted(route, read);
      if (dataVersion() === mark) return { first, second: second.answer, outcome: second.outcome };
      await sleep(250);
    }
    assert.fail('the database never stayed unwritten for two requests');
  };

  it('GET /api/mails: the same page again is a hit with the same bytes; a delivery makes the next one a miss that lists it', async () => {
    const { address, jwt } = await createAddress(server);
    const page = () => client(server)('/api/mails?limit=10&offset=0', { jwt });
    assert.deepEqual(await reuse('/api/mails'), { hit: 0, miss: 0, off: 0 });

    const first = await counted('/api/mails', page);
    assert.equal(first.answer.status, 200);
    assert.deepEqual(first.outcome, { hit: 0, miss: 1, off: 0 }, 'the first request builds the page');
    const again = await twiceStill('/api/mails', page);
    assert.deepEqual(again.outcome, { hit: 1, miss: 0, off: 0 }, 'the same request again is served from the cache');
    assert.equal(again.second.text, first.answer.text);
    assert.deepEqual(again.second.json, { results: [], count: 0 });

    await sendMail(server.smtpPort, { to: [address], message: message({ Subject: 'invalidates' }, 'x') });
    const third = await counted('/api/mails', page);
    assert.deepEqual(third.outcome, { hit: 0, miss: 1, off: 0 }, 'the delivery made the kept page stale');
    assert.deepEqual(
      third.answer.json.results.map((r: { metadata: string }) => JSON.parse(r.metadata).subject),
      ['invalidates'],
    );
    const reused = await twiceStill('/api/mails', page);
    assert.deepEqual(reused.outcome, { hit: 1, miss: 0, off: 0 }, 'and the new page is reused in turn');
    assert.equal(reused.second.text, third.answer.text);

    // Another page size, or another address, is an entry of its own.
    const other = (await createAddress(server)).jwt;
    const before = await reuse('/api/mails');
    await client(server)('/api/mails?limit=5&offset=0', { jwt });
    await client(server)('/api/mails?limit=10&offset=0', { jwt: other });
    assert.deepEqual(since(before, await reuse('/api/mails')), { hit: 0, miss: 2, off: 0 });
  });

  it('GET /api/mail/{uuid}: reused until the mail set changes (a delete elsewhere in the inbox)', async () => {
    const { address, jwt } = await createAddress(server);
    for (const subject of ['kept', 'deleted']) await sendMail(server.smtpPort, { to: [address], message: message({ Subject: subject }, 'x') });
    const [deleted, kept] = (await client(server)('/api/mails?limit=10&offset=0', { jwt })).json.results as { uuid: string }[];
    const read = () => client(server)(`/api/mail/${kept!.uuid}`, { jwt });
    const first = await twiceStill('/api/mail/:uuid', read);
    assert.deepEqual(first.outcome, { hit: 1, miss: 0, off: 0 });
    assert.equal(first.second.text, first.first.text);
    assert.equal((await client(server)(`/api/mails/${deleted!.uuid}`, { method: 'DELETE', jwt })).status, 200);
    const after = await counted('/api/mail/:uuid', read);
    assert.deepEqual(after.outcome, { hit: 0, miss: 1, off: 0 }, 'built again after the delete');
    assert.equal(after.answer.text, first.first.text);
  });
});

describe('response cache: bounded', () => {
  it('keeps entries for their version only, and evicts the least recently used past its size', () => {
    const cache = createResponseCache({ maxBytes: 10, maxEntryBytes: 6, idleMs: 60_000 });
    after(() => cache.close());
    cache.set('a', 'v1', Buffer.from('aaaa'));
    assert.equal(cache.get('a', 'v1')?.toString(), 'aaaa');
    assert.equal(cache.get('a', 'v2'), undefined);
    assert.equal(cache.get('a', 'v1'), undefined, 'a stale entry is dropped, not kept for later');
    cache.set('big', 'v1', Buffer.from('x'.repeat(7)));
    assert.equal(cache.get('big', 'v1'), undefined, 'an entry above maxEntryBytes is not kept');
    cache.set('a', 'v1', Buffer.from('aaaa'));
    cache.set('b', 'v1', Buffer.from('bbbb'));
    assert.equal(cache.get('a', 'v1')?.toString(), 'aaaa');
    cache.set('c', 'v1', Buffer.from('cccc'));
    assert.equal(cache.get('b', 'v1'), undefined, 'the least recently used entry went first');
    assert.equal(cache.get('a', 'v1')?.toString(), 'aaaa');
    assert.equal(cache.get('c', 'v1')?.toString(), 'cccc');
  });

  it('drops an entry nobody asked for within the idle time; asking keeps it', async () => {
    const cache = createResponseCache({ maxBytes: 1024, maxEntryBytes: 1024, idleMs: 400 });
    after(() => cache.close());
    cache.set('polled', 'v1', Buffer.from('page'));
    cache.set('read-once', 'v1', Buffer.from('mail'));
    for (let i = 0; i < 6; i++) {
      await sleep(100);
      assert.equal(cache.get('polled', 'v1')?.toString(), 'page', 'a polled entry stays');
    }
    assert.equal(cache.get('read-once', 'v1'), undefined, 'an entry idle for longer than idleMs is gone');
  });

  it('idle entries are released by the periodic purge, without being asked for', async () => {
    const cache = createResponseCache({ maxBytes: 1 << 20, maxEntryBytes: 1 << 20, idleMs: 300 });
    after(() => cache.close());
    for (let i = 0; i < 50; i++) cache.set(`m:${i}`, 'v1', Buffer.alloc(1000, i));
    assert.equal(cache.bytes(), 50_000);
    // idleMs, then the purge that runs at least every second.
    await sleep(1500);
    assert.equal(cache.bytes(), 0);
  });

  it('an entry holds memory of its own, not a slice of Node\'s shared Buffer pool', () => {
    const cache = createResponseCache();
    after(() => cache.close());
    const small = Buffer.from('{"results":[],"count":0}');
    assert.ok(small.buffer.byteLength > small.length, 'a small Buffer is a pool slice (the case this guards)');
    cache.set('k', 'v', small);
    const kept = cache.get('k', 'v')!;
    assert.equal(kept.toString(), '{"results":[],"count":0}');
    assert.equal(kept.buffer.byteLength, small.length, 'the cache does not keep the 8 KiB slab alive');
  });
});

describe('store: external write mark', () => {
  it('changes when another connection commits, not for this connection\'s own commits', async () => {
    const server = await startTestServer();
    try {
      const file = join(server.dataDir, 'temp-inbox.sqlite');
      const mark = server.store.externalWriteMark();
      assert.equal(typeof mark, 'number');
      await createAddress(server);
      assert.equal(server.store.externalWriteMark(), mark, 'own commit');
      const other = openSqliteStore(file);
      try {
        await other.createAddress(`x${Date.now()}@temp-inbox.localhost`, Date.now());
      } finally {
        await other.close();
      }
      assert.notEqual(server.store.externalWriteMark(), mark, 'another connection committed');
    } finally {
      await server.close();
    }
  });
});
