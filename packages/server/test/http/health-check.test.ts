// GET /health_check pings the store and answers 503 {"status":"error"} when the
// database does not answer within 2 s (http/routes/system.ts, PING_TIMEOUT_MS), on
// PostgreSQL: a database that stops answering (the connection frozen by a proxy),
// and a pool whose every connection waits on a lock another session holds. Each
// time the service recovers by itself once the database answers again.
//
// (SQLite's ping is SELECT 1 on the serving connection, which reads no page and
// so never waits on another connection's lock; its only failure, a closed
// database, is covered in logging.test.ts.)
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { client, startTestServer, type TestServer } from '../helpers/harness.js';
import { PG_URL, skipUnless } from '../helpers/services.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';

// Without PostgreSQL the cases are registered as skipped, with the reason.
const skip = skipUnless('postgres');

/** The health check's own time-out (system.ts). */
const PING_TIMEOUT_MS = 2000;
/** node-postgres' default pool size (postgres-store.ts does not change it). */
const POOL_MAX = 10;

describe('/health_check on PostgreSQL', () => {
  const schema = `hc_${process.pid}_${randomBytes(4).toString('hex')}`;
  let proxy: TcpProxy;
  let server: TestServer;
  let admin: pg.Client;

  before(async () => {
    if (skip) return;
    const target = new URL(PG_URL);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    server = await startTestServer({ DATABASE_URL: proxy.via(PG_URL), DATABASE_SCHEMA: schema });
    admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
  });
  after(async () => {
    proxy?.thaw();
    await server?.close();
    await proxy?.close();
    if (admin) {
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    }
  });

  const health = async () => {
    const started = Date.now();
    const res = await client(server)('/health_check');
    return { status: res.status, json: res.json as unknown, type: res.headers.get('content-type'), ms: Date.now() - started };
  };

  it('answers 200 {"status":"ok"} while the database answers', { skip }, async () => {
    const res = await health();
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, { status: 'ok', version: '1.0.0', storage: 'ok' });
  });

  it('a database that stops answering: 503 {"status":"error"} after the 2 s time-out, other routes still served; 200 again once it answers', { skip }, async () => {
    proxy.freeze();
    try {
      const res = await health();
      assert.equal(res.status, 503);
      assert.deepEqual(res.json, { status: 'error', version: '1.0.0', storage: 'ok' });
      assert.match(res.type ?? '', /^application\/json/);
      assert.ok(res.ms >= PING_TIMEOUT_MS - 50 && res.ms < PING_TIMEOUT_MS + 1500, `answered after ${res.ms} ms`);
      // The event loop is not stuck behind the database.
      const started = Date.now();
      assert.equal((await client(server)('/openapi.json')).status, 200);
      assert.ok(Date.now() - started < 500);
    } finally {
      proxy.thaw();
    }
    const res = await health();
    assert.equal(res.status, 200);
    assert.ok(res.ms < 1000, `answered after ${res.ms} ms`);
  });

  it('every pooled connection waiting on a lock held by another session: 503 after 2 s; the waiting requests and the health check succeed once it is released', { skip }, async () => {
    await admin.query('BEGIN');
    const requests: Promise<{ status: number }>[] = [];
    try {
      await admin.query(`LOCK TABLE "${schema}".addresses IN ACCESS EXCLUSIVE MODE`);
      // Each new address is an INSERT that waits for the lock on a pooled connection of its own.
      for (let i = 0; i < POOL_MAX; i++) requests.push(client(server)('/api/new_address', { method: 'POST', body: {} }));
      const adminPid = (await admin.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      const deadline = Date.now() + 10_000;
      for (;;) {
        // Inside a transaction pg_stat_activity is read once and kept; read it afresh.
        await admin.query('SELECT pg_stat_clear_snapshot()');
        const { rows } = await admin.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE $1 = ANY (pg_blocking_pids(pid))', [adminPid]);
        if (rows[0]!.n === POOL_MAX) break;
        assert.ok(Date.now() < deadline, `only ${rows[0]!.n} of ${POOL_MAX} connections are waiting on the lock`);
        await new Promise((r) => setTimeout(r, 50));
      }
      const res = await health();
      assert.equal(res.status, 503);
      assert.deepEqual(res.json, { status: 'error', version: '1.0.0', storage: 'ok' });
      assert.ok(res.ms >= PING_TIMEOUT_MS - 50 && res.ms < PING_TIMEOUT_MS + 1500, `answered after ${res.ms} ms`);
    } finally {
      await admin.query('COMMIT');
    }
    assert.deepEqual(
      (await Promise.all(requests)).map((r) => r.status),
      Array<number>(POOL_MAX).fill(200),
    );
    const { rows } = await admin.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${schema}".addresses`);
    assert.equal(rows[0]!.n, POOL_MAX);
    assert.equal((await health()).status, 200);
  });
});
