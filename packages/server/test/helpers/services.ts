// External services for the suites that need them (PostgreSQL, Redis, Chromium). A suite
// asks skipUnless() (or serviceAvailable()) before registering its tests: a missing
// service registers them as skipped, with the reason, and a loud warning; when
// REQUIRE_SERVICES=1 (CI) it throws instead, so the test file fails.
import { existsSync } from 'node:fs';
import { connect as netConnect, type Socket } from 'node:net';
import { userInfo } from 'node:os';
import { connect as tlsConnect } from 'node:tls';
import pg from 'pg';

export const PG_URL = process.env.TEST_DATABASE_URL ?? 'postgres://127.0.0.1:5432/test';
export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Debian's chromium (apt install chromium), driven by playwright-core; never downloaded. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export type ServiceName = 'postgres' | 'redis' | 'chromium';

// Generous: on a loaded machine (a full test run beside other work) a healthy service can take a while to answer.
const PROBE_TIMEOUT_MS = 5000;

// pg takes the default user name from $USER, which is often unset in containers
// and CI; libpq (psql) uses the OS account instead. Do the same, so a URL without
// a user name means the same thing to the tests as to psql.
if (!process.env.PGUSER && !process.env.USER) {
  try {
    process.env.PGUSER = userInfo().username;
  } catch {
    // No passwd entry: leave pg's default alone.
  }
}

/** Why each service is missing (undefined: it answers). */
const cache = new Map<ServiceName, Promise<string | undefined>>();

const LABEL: Record<ServiceName, string> = { postgres: 'PostgreSQL', redis: 'Redis', chromium: 'Chromium' };

/**
 * Whether the service answers. When it does not: throws if REQUIRE_SERVICES=1,
 * otherwise prints a loud SKIPPED line to stderr and returns false. Cached per name.
 */
export async function serviceAvailable(name: ServiceName): Promise<boolean> {
  return (await missing(name)) === undefined;
}

/**
 * false when every service named answers; otherwise the reason the first missing one
 * gives, for node:test's `{ skip: reason }` ("PostgreSQL not reachable at …: …").
 * Throws when REQUIRE_SERVICES=1 and one is missing, as serviceAvailable does.
 */
export async function skipUnless(...names: ServiceName[]): Promise<string | false> {
  for (const name of names) {
    const reason = await missing(name);
    if (reason !== undefined) return reason;
  }
  return false;
}

function missing(name: ServiceName): Promise<string | undefined> {
  let result = cache.get(name);
  if (!result) {
    result = check(name);
    cache.set(name, result);
  }
  return result;
}

async function check(name: ServiceName): Promise<string | undefined> {
  const url = name === 'postgres' ? PG_URL : name === 'redis' ? REDIS_URL : CHROMIUM_PATH;
  try {
    if (name === 'chromium') {
      if (!existsSync(CHROMIUM_PATH)) throw new Error('not installed (apt install chromium, or set CHROMIUM_PATH)');
    } else await withTimeout(name === 'postgres' ? probePostgres(url) : probeRedis(url), `no answer within ${PROBE_TIMEOUT_MS} ms`);
    return undefined;
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    if (process.env.REQUIRE_SERVICES === '1') {
      throw new Error(`${name} is required (REQUIRE_SERVICES=1) but not available at ${redact(url)}: ${reason}`);
    }
    process.stderr.write(
      `\n!!!!! SKIPPED: ${name} suites — no ${name} at ${redact(url)} (${reason}) (set REQUIRE_SERVICES=1 to make this a failure) !!!!!\n\n`,
    );
    return `${LABEL[name]} not ${name === 'chromium' ? 'found' : 'reachable'} at ${redact(url)}: ${reason}`;
  }
}

async function probePostgres(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: PROBE_TIMEOUT_MS, query_timeout: PROBE_TIMEOUT_MS });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('SELECT 1');
  } finally {
    await client.end().catch(() => {});
  }
}

/** Sends PING (after AUTH when the URL carries credentials) and expects +PONG. */
function probeRedis(url: string): Promise<void> {
  const u = new URL(url);
  const host = u.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1';
  const port = Number(u.port || 6379);
  const command = (...args: string[]) => `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`;
  let request = '';
  if (u.password) {
    const password = decodeURIComponent(u.password);
    request += u.username ? command('AUTH', decodeURIComponent(u.username), password) : command('AUTH', password);
  }
  request += 'PING\r\n';

  return new Promise<void>((resolve, reject) => {
    const socket: Socket =
      u.protocol === 'rediss:' ? tlsConnect({ host, port, servername: host }, send) : netConnect({ host, port }, send);
    let reply = '';
    const timer = setTimeout(() => finish(new Error(`no PONG within ${PROBE_TIMEOUT_MS} ms`)), PROBE_TIMEOUT_MS);
    function send(): void {
      socket.write(request);
    }
    function finish(err?: Error): void {
      clearTimeout(timer);
      socket.destroy();
      if (err) reject(err);
      else resolve();
    }
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      reply += chunk;
      if (reply.includes('+PONG\r\n')) finish();
      else if (/^-[^\r]*\r\n/m.test(reply)) finish(new Error(`Redis answered ${reply.trim()}`));
    });
    socket.on('error', (err) => finish(err));
    socket.on('close', () => finish(new Error('connection closed before PONG')));
  });
}

function withTimeout<T>(p: Promise<T>, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), PROBE_TIMEOUT_MS + 500);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/** The URL without its password, for messages. */
function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return url;
  }
}
