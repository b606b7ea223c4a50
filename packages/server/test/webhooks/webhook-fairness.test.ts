// Webhooks that never answer cannot starve the others (docs/security.md "Webhooks"): a
// black-hole receiver on 127.0.0.1 (accepts the connection, never answers) behind many
// webhooks with a backlog of mail each, and one victim webhook to a receiver that answers
// at once. Webhooks take turns (not the oldest delivery first across all of them), one
// attempt in flight per webhook, and a webhook whose attempts time out is held back, so
// the victim's mail waits for at most one round of the others' attempts, then for none.
// Run on SQLite and on PostgreSQL (the store claims). Latency is measured by the victim
// receiver's arrival; the service's time-out and slots are shortened (1.5 s, 4 slots).
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import pg from 'pg';
import { createAddress, message, request, sendMail, startTestServer, type TestServer } from '../helpers/harness.js';
import { PG_URL, skipUnless } from '../helpers/services.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';

const TIMEOUT_MS = 1500;
const SLOTS = 4;
const BLACK_HOLES = 12;
const BACKLOG = 4;

/** A receiver that takes connections and never answers; counts them. */
async function blackHole(): Promise<{ url: string; connections: () => number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let count = 0;
  const server: Server = createServer((s) => {
    count++;
    sockets.add(s);
    s.on('error', () => undefined);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/never`,
    connections: () => count,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const mailTo = (s: TestServer, address: string) => sendMail(s.smtpPort, { to: [address], message: message({ Subject: 'x', 'Message-ID': `<${randomUUID()}@test>` }, 'x') });

async function hook(s: TestServer, url: string) {
  const a = await createAddress(s);
  const put = await request(s.httpUrl, '/api/webhook', { method: 'PUT', jwt: a.jwt, body: { url } });
  assert.equal(put.status, 200, put.text);
  return { ...a, secret: put.json.secret as string };
}

const pgSkip = skipUnless('postgres');
const schemas: string[] = [];
after(async () => {
  if (schemas.length === 0) return;
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  for (const schema of schemas) await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await client.end();
});

for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`webhooks that never answer do not starve the others (${backend})`, () => {
    it(`${BLACK_HOLES} webhooks to a black hole with ${BACKLOG} mails each: a victim's mail waits at most one round of their attempts, and once they are held, none`, { skip: backend === 'postgres' && pgSkip, timeout: 120_000 }, async (t) => {
      const env: Record<string, string> = { WEBHOOK_ALLOW_PRIVATE: 'true' };
      if (backend === 'postgres') {
        const schema = `whfair_${process.pid}_${randomBytes(4).toString('hex')}`;
        schemas.push(schema);
        Object.assign(env, { DATABASE_URL: PG_URL, DATABASE_SCHEMA: schema });
      }
      const hole = await blackHole();
      const victimReceiver: Receiver = await startReceiver();
      const arrivals: number[] = [];
      victimReceiver.answer = () => (arrivals.push(performance.now()), { status: 204 });
      // The default back-off and hold (the hold, 15 to 30 s, outlasts the test).
      const s = await startTestServer(env, undefined, undefined, { webhooks: { timeoutMs: TIMEOUT_MS, concurrency: SLOTS, pollMs: 200 } });
      try {
        // The black holes' webhooks are set first, so in the first round each has its turn before the victim's.
        const holes = [];
        for (let i = 0; i < BLACK_HOLES; i++) holes.push(await hook(s, hole.url));
        const victim = await hook(s, victimReceiver.url());
        victimReceiver.secret = victim.secret;
        for (let m = 0; m < BACKLOG; m++) for (const h of holes) await mailTo(s, h.address);
        // The black holes hold the slots (the first of them may have timed out already on a slow machine).
        const deadline = Date.now() + 10_000;
        while (hole.connections() < SLOTS && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
        assert.ok(hole.connections() >= SLOTS, 'the slots are taken');

        const sent = performance.now();
        await mailTo(s, victim.address);
        await victimReceiver.untilPosts(1, 60_000);
        const first = arrivals[0]! - sent;
        // Oldest first across all webhooks it waited for every black-hole mail before it:
        // BLACK_HOLES * BACKLOG / SLOTS attempts of TIMEOUT_MS (18 s). In turns, for one
        // attempt of each black hole at most: BLACK_HOLES / SLOTS (4.5 s).
        const bound = (BLACK_HOLES / SLOTS + 1) * TIMEOUT_MS + 2000;
        t.diagnostic(`first mail: ${first.toFixed(0)} ms after it was sent, ${hole.connections()} black-hole connections by then`);
        assert.ok(first < bound, `the victim's first mail arrived after ${first.toFixed(0)} ms (bound ${bound} ms)`);

        // The black holes have each timed out once by now and are held; mail keeps coming to them.
        while (hole.connections() < BLACK_HOLES && Date.now() < deadline + 20_000) await new Promise((r) => setTimeout(r, 20));
        for (const h of holes) await mailTo(s, h.address);
        const again = performance.now();
        await mailTo(s, victim.address);
        await victimReceiver.untilPosts(2, 30_000);
        const second = arrivals[1]! - again;
        t.diagnostic(`next mail: ${second.toFixed(0)} ms, ${hole.connections()} black-hole connections in all`);
        assert.ok(second < TIMEOUT_MS, `the victim's next mail arrived after ${second.toFixed(0)} ms: it waited for no black-hole attempt`);
        assert.ok(hole.connections() <= BLACK_HOLES + SLOTS, `${hole.connections()} connections to the black hole: held webhooks are not tried at every mail`);
        assert.ok(victimReceiver.posts.every((p) => p.verified), 'signed');
      } finally {
        await s.close();
        await hole.close();
        await victimReceiver.stop();
      }
    });
  });
}
