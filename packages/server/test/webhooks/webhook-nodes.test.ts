// Webhooks on two nodes sharing PostgreSQL and Redis (docs/decisions.md "Webhooks"): both
// dispatchers claim from one outbox, and each delivery is POSTed by exactly one of them;
// a node that stops leaves its pending deliveries to the other.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { openPostgresStore } from '../../src/storage/postgres/postgres-store.js';
import { postgresWebhookStore } from '../../src/storage/postgres/postgres-webhooks.js';
import type { NewMail } from '../../src/storage/store.js';
import { createAddress, message, request, sendMail, startTestServer, type TestServer } from '../helpers/harness.js';
import { PG_URL, REDIS_URL, skipUnless } from '../helpers/services.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';

const skip = skipUnless('postgres', 'redis');

describe('webhooks on two nodes (PostgreSQL + Redis)', () => {
  const schema = `wh_${process.pid}_${randomBytes(4).toString('hex')}`;
  const operatorSecret = `whsec_${randomBytes(32).toString('base64')}`;
  // Both nodes sign and read the same tokens and sessions.
  const jwtSecret = randomBytes(32).toString('hex');
  const sessionSecret = randomBytes(32).toString('hex');
  let operator: Receiver;
  let own: Receiver;
  let a: TestServer;
  let b: TestServer;
  const start = () =>
    startTestServer(
      {
        DATABASE_URL: PG_URL,
        DATABASE_SCHEMA: schema,
        REDIS_URL,
        REDIS_KEY_PREFIX: `${schema}:`,
        JWT_SECRET: jwtSecret,
        SESSION_SECRET: sessionSecret,
        WEBHOOK_ALLOW_PRIVATE: 'true',
        WEBHOOK_URL: operator.url('/all'),
        WEBHOOK_SECRET: operatorSecret,
      },
      undefined,
      undefined,
      { webhooks: { backoff: () => 50, pollMs: 100 } },
    );

  before(async () => {
    if (skip) return;
    operator = await startReceiver();
    operator.secret = operatorSecret;
    own = await startReceiver();
    a = await start();
    b = await start();
  });
  after(async () => {
    if (skip) return;
    await a?.close();
    await b?.close();
    await operator?.stop();
    await own?.stop();
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await client.end();
  });

  /** POSTs per webhook-id: [all, 2xx answered]. */
  const tally = (r: Receiver, ok: (i: number) => boolean) => {
    const byId = new Map<string, [number, number]>();
    r.posts.forEach((p, i) => {
      const id = String(p.headers['webhook-id']);
      const [all, good] = byId.get(id) ?? [0, 0];
      byId.set(id, [all + 1, good + (ok(i) ? 1 : 0)]);
    });
    return byId;
  };

  it('each mail, received by either node, is POSTed by exactly one node: to its address webhook and to the operator WEBHOOK_URL', { skip }, async () => {
    // Every first attempt fails, so retries happen, on whichever node claims them.
    const failed = new Set<string>();
    const firstFails = (p: { headers: Record<string, unknown> }) => {
      const id = String(p.headers['webhook-id']);
      if (failed.has(id)) return true;
      failed.add(id);
      return false;
    };
    const ownOk: boolean[] = [];
    own.answer = (p) => {
      const ok = firstFails(p);
      ownOk.push(ok);
      return { status: ok ? 200 : 500 };
    };
    const addresses: { address: string; secret: string }[] = [];
    for (let i = 0; i < 4; i++) {
      const { address, jwt } = await createAddress(i % 2 ? a : b, { name: `nodes-${i}` });
      const put = await request((i % 2 ? b : a).httpUrl, '/api/webhook', { method: 'PUT', jwt, body: { url: own.url(`/own-${i}`) } });
      assert.equal(put.status, 200, put.text);
      addresses.push({ address, secret: put.json.secret as string });
    }
    const MAILS = 24;
    // Four at a time (two connections per node, under the per-client connection cap).
    for (let i = 0; i < MAILS; i += 4) {
      await Promise.all(
        [i, i + 1, i + 2, i + 3].map((n) =>
          sendMail((n % 2 ? a : b).smtpPort, { to: [addresses[n % 4]!.address], message: message({ Subject: `mail ${n}`, 'Message-ID': `<nodes-${n}@test>` }, `n ${n}`) }),
        ),
      );
    }
    await operator.untilPosts(MAILS, 20_000);
    await own.untilPosts(2 * MAILS, 20_000);
    // Anything sent twice would arrive within a few polls; a last mail's POST coming next shows nothing else is on its way.
    await sendMail(a.smtpPort, { to: [addresses[0]!.address], message: message({ Subject: 'last' }, 'x') });
    await own.untilPosts(2 * MAILS + 2, 20_000);
    await operator.untilPosts(MAILS + 1, 20_000);

    const ownTally = tally(own, (i) => ownOk[i]!);
    assert.equal(ownTally.size, MAILS + 1);
    for (const [id, [all, good]] of ownTally) assert.deepEqual([all, good], [2, 1], `${id}: one failed attempt, then delivered once`);
    const operatorTally = tally(operator, () => true);
    assert.equal(operatorTally.size, MAILS + 1);
    for (const [id, [all]] of operatorTally) assert.equal(all, 1, `${id} POSTed once to the operator`);
    assert.ok(operator.posts.every((p) => p.verified), 'signed with WEBHOOK_SECRET on both nodes');
    // Each address's webhook got its own mail, signed with its own secret.
    for (const p of own.posts) {
      const i = Number(/own-(\d)/.exec(p.path)![1]);
      assert.equal(p.event.data.address, addresses[i]!.address);
    }
  });

  it('a node stopped while deliveries are pending leaves them to the other, which sends each once', { skip }, async () => {
    const r = await startReceiver();
    try {
      r.answer = () => ({ status: 503 });
      const { address, jwt } = await createAddress(a, { name: 'nodes-handover' });
      const put = await request(a.httpUrl, '/api/webhook', { method: 'PUT', jwt, body: { url: r.url() } });
      r.secret = put.json.secret;
      for (let i = 0; i < 3; i++) await sendMail(a.smtpPort, { to: [address], message: message({ Subject: `handover ${i}` }, 'x') });
      await r.untilPosts(6);
      await a.close();
      const before = r.posts.length;
      r.answer = () => ({ status: 200 });
      await r.untilPosts(before + 3, 20_000);
      // Three distinct mails, once each (the last of these arrived on b), and nothing more.
      await sendMail(b.smtpPort, { to: [address], message: message({ Subject: 'after' }, 'x') });
      await r.untilPosts(before + 4, 20_000);
      const delivered = r.posts.slice(before);
      assert.equal(new Set(delivered.map((p) => p.headers['webhook-id'])).size, 4);
      assert.ok(delivered.every((p) => p.verified));
      const list = (await request(b.httpUrl, '/api/webhook/deliveries', { jwt })).json.results as { outcome: string }[];
      assert.ok(list.filter((d) => d.outcome === 'delivered').length >= 3);
    } finally {
      await r.stop();
      a = await start(); // for after()'s close
    }
  });
});

describe('the PostgreSQL outbox claimed by two nodes at once', () => {
  it("never hands a delivery to two claimers, nor two of one webhook (nor of the operator's) at once: 600 deliveries, eight claimers on two connection pools racing, each claimed exactly once", { skip, timeout: 120_000 }, async () => {
    const schema = `whrace_${process.pid}_${randomBytes(4).toString('hex')}`;
    const nodeA = await openPostgresStore(PG_URL, { schema });
    const nodeB = await openPostgresStore(PG_URL, { schema });
    try {
      const now = Date.now();
      const addresses = [];
      for (let i = 0; i < 30; i++) {
        const a = (await nodeA.createAddress(`race-${i}@example.com`, now))!;
        await nodeA.putWebhook(a.id, `https://hooks.example/${i}`, 'whsec_x', now);
        addresses.push(a);
      }
      // Ten mails per address, every one also for the operator: 300 address deliveries and 300 operator ones.
      for (let m = 0; m < 10; m++) {
        await nodeB.insertMails(
          addresses.map((a, i) => ({
            uuid: `0190a0b0-0000-7000-8000-${String(m * 100 + i).padStart(12, '0')}`,
            addressId: a.id,
            address: a.address,
            source: 's@example.org',
            messageId: '',
            metadata: '{}',
            trace: Buffer.alloc(0),
            body: { raw: Buffer.from('x'), attachments: [] },
            createdAt: now,
            operatorWebhook: true,
          })),
        );
      }
      const claimedBy = new Map<number, string>();
      /** Webhooks with an attempt in flight (claimed, not yet finished), and whose it is; 0 for the operator's. */
      const inFlight = new Map<number, string>();
      let overlaps = 0;
      const hookOf = (d: { webhookId: number | null }) => d.webhookId ?? 0;
      const claimer = async (store: typeof nodeA, owner: string) => {
        // Until every delivery is claimed: the operator's go one at a time, so a claimer
        // finding none now (another holds the operator's) may find one after its finish.
        while (claimedBy.size < 600) {
          const got = await store.claimDeliveries({ owner, now: now + 1, leaseMs: 600_000, limit: 7, busyWebhooks: [], operator: true });
          if (got.length === 0) {
            await new Promise((resolve) => setImmediate(resolve));
            continue;
          }
          for (const d of got) {
            assert.equal(claimedBy.get(d.id), undefined, `delivery ${d.id} claimed by ${claimedBy.get(d.id)} and ${owner}`);
            claimedBy.set(d.id, owner);
            if (inFlight.has(hookOf(d))) overlaps++;
            inFlight.set(hookOf(d), owner);
          }
          // A moment in flight, as an attempt is, so that others claim meanwhile.
          await new Promise((resolve) => setImmediate(resolve));
          for (const d of got) {
            // Out of the map before the finish: its webhook is free only once that has committed.
            inFlight.delete(hookOf(d));
            // Done at once, as after a 2xx: the next delivery of its webhook can be claimed.
            assert.equal(await store.finishDelivery(owner, d.id, { webhookId: d.webhookId, addressId: d.addressId, mailUuid: d.mail.uuid, url: d.url ?? 'op', attempt: 1, at: now, outcome: 'delivered', status: 200, durationMs: 1, error: null, nextAt: null }, { notBefore: 0, timeouts: 0 }), true);
          }
        }
      };
      await Promise.all([0, 1, 2, 3].flatMap((i) => [claimer(nodeA, `a${i}`), claimer(nodeB, `b${i}`)]));
      assert.equal(claimedBy.size, 600, 'every delivery claimed, once');
      assert.equal(overlaps, 0, "never two attempts in flight to one webhook, nor to the operator's, on either node");
      const owners = new Set(claimedBy.values());
      assert.ok([...owners].some((o) => o.startsWith('a')) && [...owners].some((o) => o.startsWith('b')), 'both nodes took part');
      assert.equal(await nodeA.nextDeliveryAt(true, 0), undefined, 'nothing left');
    } finally {
      await nodeA.close();
      await nodeB.close();
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await client.end();
    }
  });
});

/**
 * A connection pool on `schema` whose statements wait, before they are sent, for what
 * `gate` answers: the test's hold on a claim at a chosen statement (pg's own pool and
 * connections, the statements and PostgreSQL unchanged).
 */
function gatedPool(schema: string, name: string, gate: (sql: string) => Promise<void> | undefined): pg.Pool {
  const pool = new pg.Pool({ connectionString: PG_URL, options: `-c search_path=${schema}`, application_name: name, max: 2 });
  // Each connection, as the pool makes it: pool.query and transactions both go through one.
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    client.query = (async (...args: unknown[]) => {
      await gate(typeof args[0] === 'string' ? args[0] : '');
      return query(...args);
    }) as unknown as typeof client.query;
  });
  return pool;
}

/** Resolves once `work` has settled or a statement of the connections named `name` waits for a lock in PostgreSQL (looked at every 20 ms). */
async function settledOrWaiting(work: Promise<unknown>, name: string): Promise<void> {
  let settled = false;
  void work.then(
    () => (settled = true),
    () => (settled = true),
  );
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    while (!settled) {
      const { rows } = await client.query("SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'", [name]);
      if (rows.length > 0) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  } finally {
    await client.end();
  }
}

/** A promise and its resolve. */
function barrier() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

describe("the PostgreSQL claim's row locks, with two claims held at chosen statements", () => {
  // Claim B has read its candidates when an earlier-due delivery of the same webhook commits
  // (a mail whose transaction took a moment: its arrival time is before B's read). Claim A
  // reads then, picks that one, locks and leases the webhook, and is held before COMMIT;
  // B goes on with the candidate it read, a later delivery of the same webhook, unlocked.
  // Only the lock on the webhook's row (or the operator's) keeps B from a second attempt.
  for (const target of ['an address webhook', "the operator's WEBHOOK_URL"] as const) {
    it(`B does not start an attempt to ${target} whose row A has locked and leased in a transaction not yet committed`, { skip }, async () => {
      const schema = `whlock_${process.pid}_${randomBytes(4).toString('hex')}`;
      const setup = await openPostgresStore(PG_URL, { schema });
      const B = { atBegin: barrier(), go: barrier() };
      const A = { atCommit: barrier(), go: barrier() };
      const poolA = gatedPool(schema, `${schema}-a`, (sql) => (sql === 'COMMIT' ? (A.atCommit.open(), A.go.opened) : undefined));
      const poolB = gatedPool(schema, `${schema}-b`, (sql) => (sql === 'BEGIN' ? (B.atBegin.open(), B.go.opened) : undefined));
      try {
        const now = Date.now();
        const address = (await setup.createAddress('lock@example.com', now))!;
        const operator = target !== 'an address webhook';
        // The address's webhook, or (for the operator's case) none: its mail is for the operator only.
        const hookId = operator ? null : (await setup.putWebhook(address.id, 'https://hooks.example/lock', 'whsec_x', now)).id;
        const mail = (n: number, createdAt: number): NewMail => ({
          uuid: `0190a0b0-0000-7000-8000-${String(n).padStart(12, '0')}`,
          addressId: address.id,
          address: address.address,
          source: 's@example.org',
          messageId: '',
          metadata: '{}',
          trace: Buffer.alloc(0),
          body: { raw: Buffer.from('x'), attachments: [] },
          createdAt,
          operatorWebhook: operator,
        });
        await setup.insertMails([mail(1, now)]);

        const claim = (pool: pg.Pool, owner: string) =>
          postgresWebhookStore(pool).claimDeliveries({ owner, now: now + 10, leaseMs: 600_000, limit: 4, busyWebhooks: [], operator: true });
        const claimB = claim(poolB, 'b');
        await B.atBegin.opened;
        // B has read mail 1's delivery as the one due; mail 2's, due earlier, commits now.
        await setup.insertMails([mail(2, now - 5)]);
        const claimA = claim(poolA, 'a');
        await A.atCommit.opened;
        B.go.open();
        // B ends its claim, or (had it leased the webhook's next delivery) waits in PostgreSQL
        // for A's transaction; then A commits.
        await settledOrWaiting(claimB, `${schema}-b`);
        A.go.open();
        const [gotA, gotB] = await Promise.all([claimA, claimB]);
        assert.ok([...gotA, ...gotB].every((d) => d.webhookId === hookId));
        assert.deepEqual(gotA.map((d) => d.mail.uuid), [mail(2, 0).uuid], "A took the earliest due, mail 2's");
        assert.deepEqual(gotB.map((d) => d.mail.uuid), [], `B took none: ${target} had A's attempt in flight`);
      } finally {
        A.go.open();
        B.go.open();
        await poolA.end();
        await poolB.end();
        await setup.close();
        const client = new pg.Client({ connectionString: PG_URL });
        await client.connect();
        await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await client.end();
      }
    });
  }
});
