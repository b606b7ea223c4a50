// Two nodes of the service on one PostgreSQL schema of their own and one Redis, for
// a describe block: started in its before hook, stopped and the schema dropped in its
// after hook. Nothing is started when `skip` says why not (skipUnless).
import { after, before } from 'node:test';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { startTestServer, type TestServer } from './harness.js';
import { PG_URL, REDIS_URL } from './services.js';

export interface TwoNodes {
  /** The environment both nodes run with (secrets shared, as a deployment's are). */
  readonly env: Record<string, string>;
  readonly a: TestServer;
  readonly b: TestServer;
}

/** Call inside a describe; read `a` and `b` in its tests (or in a before hook registered after this call). */
export function twoNodes(prefix: string, skip: string | false, extraEnv: Record<string, string> = {}): TwoNodes {
  const schema = `${prefix}_${process.pid}_${randomBytes(4).toString('hex')}`;
  const env = {
    DATABASE_URL: PG_URL,
    DATABASE_SCHEMA: schema,
    REDIS_URL,
    // Keys and the event channel of their own: address ids start at 1 in every schema.
    REDIS_KEY_PREFIX: `${schema}:`,
    JWT_SECRET: randomBytes(32).toString('hex'),
    SESSION_SECRET: randomBytes(32).toString('hex'),
    ...extraEnv,
  };
  const nodes: { a?: TestServer; b?: TestServer } = {};
  before(async () => {
    if (skip) return;
    nodes.a = await startTestServer(env);
    nodes.b = await startTestServer(env);
  });
  after(async () => {
    if (skip) return;
    await nodes.a?.close();
    await nodes.b?.close();
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await client.end();
  });
  return {
    env,
    get a() {
      if (!nodes.a) throw new Error('node a is not running (skipped, or read before the before hook)');
      return nodes.a;
    },
    get b() {
      if (!nodes.b) throw new Error('node b is not running (skipped, or read before the before hook)');
      return nodes.b;
    },
  };
}
