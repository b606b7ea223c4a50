// Probes the external services the suites use and prints one JSON object: for each name
// given, null when it answers, else why not. Plain JavaScript, run as its own process by
// services.ts (synchronously, so that a test file needs no top-level await to register its
// tests) and once for a whole run by scripts/test.mjs, which hands the answer to every file.
//
//   node probe-services.mjs postgres redis chromium
import { existsSync, realpathSync } from 'node:fs';
import { connect as netConnect } from 'node:net';
import { userInfo } from 'node:os';
import { connect as tlsConnect } from 'node:tls';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

export const PG_URL = process.env.TEST_DATABASE_URL ?? 'postgres://127.0.0.1:5432/test';
export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
/** Debian's chromium (apt install chromium), driven by playwright-core; never downloaded. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const SERVICES = ['postgres', 'redis', 'chromium'];

// Generous: on a loaded machine (a full test run beside other work) a healthy service can take a while to answer.
const PROBE_TIMEOUT_MS = 5000;

// pg takes the default user name from $USER, which is often unset in containers and CI;
// libpq (psql) uses the OS account instead. Do the same, so a URL without a user name
// means the same thing to the tests as to psql.
export function defaultPgUser() {
  if (process.env.PGUSER || process.env.USER) return;
  try {
    process.env.PGUSER = userInfo().username;
  } catch {
    // No passwd entry: leave pg's default alone.
  }
}

/** The URL a service is reached at, without its password (for messages). */
export function where(name) {
  const url = name === 'postgres' ? PG_URL : name === 'redis' ? REDIS_URL : CHROMIUM_PATH;
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return url;
  }
}

/** Why the service does not answer, or null when it does. */
export async function probe(name) {
  try {
    if (name === 'chromium') {
      if (!existsSync(CHROMIUM_PATH)) throw new Error('not installed (apt install chromium, or set CHROMIUM_PATH)');
    } else await withTimeout(name === 'postgres' ? probePostgres(PG_URL) : probeRedis(REDIS_URL), `no answer within ${PROBE_TIMEOUT_MS} ms`);
    return null;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

async function probePostgres(url) {
  defaultPgUser();
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
function probeRedis(url) {
  const u = new URL(url);
  const host = u.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1';
  const port = Number(u.port || 6379);
  const command = (...args) => `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`;
  let request = '';
  if (u.password) {
    const password = decodeURIComponent(u.password);
    request += u.username ? command('AUTH', decodeURIComponent(u.username), password) : command('AUTH', password);
  }
  request += 'PING\r\n';
  return new Promise((resolve, reject) => {
    const socket = u.protocol === 'rediss:' ? tlsConnect({ host, port, servername: host }, send) : netConnect({ host, port }, send);
    let reply = '';
    const timer = setTimeout(() => finish(new Error(`no PONG within ${PROBE_TIMEOUT_MS} ms`)), PROBE_TIMEOUT_MS);
    function send() {
      socket.write(request);
    }
    function finish(err) {
      clearTimeout(timer);
      socket.destroy();
      if (err) reject(err);
      else resolve();
    }
    socket.setEncoding('utf8');
    socket.on('data', (chunk) => {
      reply += chunk;
      if (reply.includes('+PONG\r\n')) finish();
      else if (/^-[^\r]*\r\n/m.test(reply)) finish(new Error(`Redis answered ${reply.trim()}`));
    });
    socket.on('error', (err) => finish(err));
    socket.on('close', () => finish(new Error('connection closed before PONG')));
  });
}

function withTimeout(p, message) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), PROBE_TIMEOUT_MS + 500);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/** Every name given (all when none), probed side by side: { name: null | reason }. */
export async function probeAll(names = SERVICES) {
  const reasons = await Promise.all(names.map((n) => probe(n)));
  return Object.fromEntries(names.map((n, i) => [n, reasons[i]]));
}

if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const names = process.argv.slice(2);
  const unknown = names.filter((n) => !SERVICES.includes(n));
  if (unknown.length > 0) {
    process.stderr.write(`probe-services: unknown service ${unknown.join(', ')} (known: ${SERVICES.join(', ')})\n`);
    process.exit(2);
  }
  // .then(), not a top-level await: test files load this module through services.ts, and a
  // module with a top-level await cannot be loaded with require() (scripts/test-groups.mjs).
  void probeAll(names.length > 0 ? names : SERVICES).then((answers) => process.stdout.write(`${JSON.stringify(answers)}\n`));
}
