// The operator's WEBHOOK_URL on the same terms as an address's webhook (docs/security.md
// "Webhooks"): one attempt in flight at a time on every node, held after time-outs, served
// in its turn. Real receivers on 127.0.0.1, real SMTP, on SQLite and on PostgreSQL (and
// on two nodes sharing PostgreSQL). What is asserted is counted at the receivers (attempts,
// how many were open at once, which ended before what), never a wall-clock duration.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer, type Socket } from 'node:net';
import pg from 'pg';
import { createAddress, message, request, sendMail, startTestServer, type TestServer } from '../helpers/harness.js';
import { PG_URL, REDIS_URL, skipUnless } from '../helpers/services.js';
import { startReceiver } from '../helpers/webhook-receiver.js';
import type { WebhookTuning } from '../../src/webhooks/dispatcher.js';

const OPERATOR_SECRET = `whsec_${randomBytes(32).toString('base64')}`;

/** Resolves when `ok()` holds, checked at each event the caller reports with `changed()`. */
function signal() {
  const waiters: (() => void)[] = [];
  return {
    changed: () => waiters.splice(0).forEach((w) => w()),
    until(what: string, ok: () => boolean, ms = 30_000): Promise<void> {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`not seen within ${ms} ms: ${what}`)), ms);
        const check = () => {
          if (ok()) {
            clearTimeout(timer);
            resolve();
          } else waiters.push(check);
        };
        check();
      });
    },
  };
}

/** A receiver that takes connections and never answers: counts them, those open at once at most, and those the sender ended. */
async function blackHole() {
  const sockets = new Set<Socket>();
  const seen = signal();
  const stats = { connections: 0, maxOpen: 0, ended: 0 };
  const server = createServer((s) => {
    stats.connections++;
    sockets.add(s);
    stats.maxOpen = Math.max(stats.maxOpen, sockets.size);
    s.on('error', () => undefined);
    // Read (and dropped), so that the sender's close is seen.
    s.resume();
    s.on('close', () => {
      sockets.delete(s);
      stats.ended++;
      seen.changed();
    });
    seen.changed();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/never`,
    stats,
    until: seen.until,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * An operator receiver that answers each POST a moment later (a slow receiver), the first
 * `hang` of them never: records each POST's webhook-id, which were answered 2xx, and the
 * most requests it held open at once.
 */
async function slowReceiver(answerAfterMs: number, hang = 0) {
  const seen = signal();
  const stats = { posts: [] as string[], delivered: [] as string[], open: 0, maxOpen: 0 };
  const held = new Set<ServerResponse>();
  const server = createHttpServer((req: IncomingMessage, res: ServerResponse) => {
    stats.open++;
    stats.maxOpen = Math.max(stats.maxOpen, stats.open);
    res.on('close', () => {
      stats.open--;
      held.delete(res);
      seen.changed();
    });
    req.resume();
    req.on('end', () => {
      const id = String(req.headers['webhook-id']);
      stats.posts.push(id);
      seen.changed();
      if (stats.posts.length <= hang) return void held.add(res);
      setTimeout(() => {
        stats.delivered.push(id);
        res.writeHead(204).end();
      }, answerAfterMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/all`,
    stats,
    until: seen.until,
    async close() {
      for (const r of held) r.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const mailTo = (s: TestServer, address: string) => sendMail(s.smtpPort, { to: [address], message: message({ Subject: 'x', 'Message-ID': `<${randomUUID()}@test>` }, 'x') });

/** An address whose own webhook POSTs to `url`. */
async function hooked(s: TestServer, url: string) {
  const a = await createAddress(s);
  const put = await request(s.httpUrl, '/api/webhook', { method: 'PUT', jwt: a.jwt, body: { url } });
  assert.equal(put.status, 200, put.text);
  return { ...a, secret: put.json.secret as string };
}

const pgSkip = skipUnless('postgres');
const pgRedisSkip = skipUnless('postgres', 'redis');
const schemas: string[] = [];
after(async () => {
  if (schemas.length === 0) return;
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  for (const schema of schemas) await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await client.end();
});

function backendEnv(backend: 'sqlite' | 'postgres'): Record<string, string> {
  if (backend === 'sqlite') return {};
  const schema = `whop_${process.pid}_${randomBytes(4).toString('hex')}`;
  schemas.push(schema);
  return { DATABASE_URL: PG_URL, DATABASE_SCHEMA: schema };
}

const startWith = (backend: 'sqlite' | 'postgres', operatorUrl: string, webhooks: Partial<WebhookTuning>) =>
  startTestServer({ ...backendEnv(backend), WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_URL: operatorUrl, WEBHOOK_SECRET: OPERATOR_SECRET }, undefined, undefined, { webhooks });

const SLOTS = 4;
const FLOOD = 20;

for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`the operator's WEBHOOK_URL takes one slot at a time (${backend})`, { skip: backend === 'postgres' && pgSkip }, () => {
    it(`an operator receiver that never answers, ${FLOOD} mails queued for it: an address webhook's mail is delivered while the operator's first attempt is still open, the only one`, { timeout: 120_000 }, async () => {
      const hole = await blackHole();
      const victim = await startReceiver();
      // No operator attempt can end during the case (its time-out is far off): a delivery
      // that had to wait for a slot would wait for one to end.
      const s = await startWith(backend, hole.url, { timeoutMs: 20_000, concurrency: SLOTS, pollMs: 200 });
      try {
        const own = await hooked(s, victim.url());
        victim.secret = own.secret;
        const flooded = await createAddress(s);
        for (let i = 0; i < FLOOD; i++) await mailTo(s, flooded.address);
        await hole.until('the first operator attempt', () => hole.stats.connections >= 1);
        await mailTo(s, own.address);
        const [post] = await victim.untilPosts(1, 40_000);
        assert.equal(post!.verified, true);
        // Before: the operator's deliveries took all SLOTS at once, and the address's waited for the first time-out.
        assert.deepEqual(
          { connections: hole.stats.connections, maxOpen: hole.stats.maxOpen, ended: hole.stats.ended },
          { connections: 1, maxOpen: 1, ended: 0 },
          "one operator attempt in flight, and the address's delivery did not wait for it to end",
        );
      } finally {
        await hole.close();
        await s.close();
        await victim.stop();
      }
    });

    it('after its attempt timed out, the operator receiver is held: mail keeps coming and other webhooks are served, and it is not tried again', { timeout: 120_000 }, async () => {
      const hole = await blackHole();
      const victim = await startReceiver();
      // The default hold (15 to 30 s after a first time-out) outlasts the case.
      const s = await startWith(backend, hole.url, { timeoutMs: 1000, concurrency: SLOTS, pollMs: 200 });
      try {
        const own = await hooked(s, victim.url());
        const flooded = await createAddress(s);
        for (let i = 0; i < 5; i++) await mailTo(s, flooded.address);
        await hole.until(`the first operator attempt timed out (${JSON.stringify(hole.stats)})`, () => hole.stats.ended >= 1);
        // Each of these mails is queued for the operator too; its deliveries are due, and held.
        for (let round = 1; round <= 3; round++) {
          for (let i = 0; i < 3; i++) await mailTo(s, flooded.address);
          await mailTo(s, own.address);
          await victim.untilPosts(round, 30_000);
        }
        assert.deepEqual({ connections: hole.stats.connections, maxOpen: hole.stats.maxOpen }, { connections: 1, maxOpen: 1 }, 'held since its time-out: not tried at every mail');
      } finally {
        await hole.close();
        await s.close();
        await victim.stop();
      }
    });

    it("an operator receiver that first never answers, then answers slowly: every mail is delivered to it once, one attempt at a time, after its hold", { timeout: 120_000 }, async () => {
      // Each answer takes 100 ms, the hung one 2 s: attempts that were not one at a time would overlap.
      const slow = await slowReceiver(100, 1);
      const s = await startWith(backend, slow.url, { timeoutMs: 2000, timeoutHold: () => 300, backoff: () => 100, concurrency: SLOTS, pollMs: 200 });
      try {
        const flooded = await createAddress(s);
        const MAILS = 12;
        for (let i = 0; i < MAILS; i++) await mailTo(s, flooded.address);
        await slow.until(`${MAILS} operator deliveries answered`, () => new Set(slow.stats.delivered).size === MAILS && slow.stats.open === 0);
        assert.equal(slow.stats.delivered.length, MAILS, 'each delivered once');
        assert.equal(slow.stats.posts.length, MAILS + 1, 'one attempt more: the first, which timed out, was made again');
        assert.equal(slow.stats.posts.filter((id) => id === slow.stats.posts[0]).length, 2);
        assert.equal(slow.stats.maxOpen, 1, `never two operator attempts at once (${JSON.stringify(slow.stats)})`);
      } finally {
        await s.close();
        await slow.close();
      }
    });
  });
}

describe("the operator's WEBHOOK_URL on two nodes sharing PostgreSQL", { skip: pgRedisSkip }, () => {
  it('mail arriving on both nodes: the operator receiver never has two attempts open at once, and gets every mail once', { timeout: 120_000 }, async () => {
    const schema = `whop2_${process.pid}_${randomBytes(4).toString('hex')}`;
    schemas.push(schema);
    const jwtSecret = randomBytes(32).toString('hex');
    const sessionSecret = randomBytes(32).toString('hex');
    const slow = await slowReceiver(30);
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
          WEBHOOK_URL: slow.url,
          WEBHOOK_SECRET: OPERATOR_SECRET,
        },
        undefined,
        undefined,
        { webhooks: { concurrency: SLOTS, pollMs: 100 } },
      );
    const a = await start();
    const b = await start();
    try {
      const to = await createAddress(a);
      const MAILS = 16;
      // Two at a time, one to each node, so that both have operator deliveries to claim.
      for (let i = 0; i < MAILS; i += 2) await Promise.all([mailTo(a, to.address), mailTo(b, to.address)]);
      await slow.until(`${MAILS} operator deliveries answered`, () => new Set(slow.stats.delivered).size === MAILS && slow.stats.open === 0);
      assert.equal(slow.stats.delivered.length, MAILS, 'each delivered once, by one node');
      assert.equal(slow.stats.maxOpen, 1, 'one operator attempt in flight on both nodes together');
    } finally {
      await a.close();
      await b.close();
      await slow.close();
    }
  });
});
