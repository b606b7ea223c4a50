// Start-up failures as the operator sees them (docs/deploy.md "Start-up errors"): the
// real command, run as a child process, prints one line naming the variable to fix
// and the service behind it, with no stack trace, and exits 1. Also the 415 of a body
// that is not JSON, which says what to send.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { request } from 'node:http';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTempInbox } from '../../src/index.js';
import { PG_URL, REDIS_URL, skipUnless } from '../helpers/services.js';
import { MAIN_SOURCE, spawnService } from '../helpers/source-process.js';

const dirs: string[] = [];
const held: Server[] = [];
after(() => {
  for (const s of held) s.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const dataDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'temp-inbox-startup-'));
  dirs.push(dir);
  return dir;
};

/** A port on 127.0.0.1 that something else holds. */
async function takenPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  held.push(server);
  return (server.address() as AddressInfo).port;
}

/** A port on 127.0.0.1 where nothing listens (taken, then let go). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Runs the service expecting it to refuse to start: its exit code and stderr. */
async function failure(env: Record<string, string>, wrapper: string[] = []): Promise<{ code: number | string; stderr: string; stdout: string }> {
  const p = spawnService({ DATA_DIR: dataDir(), ...env }, wrapper);
  const code = await p.exited;
  return { code, stderr: p.stderr(), stdout: p.stdout() };
}

function assertOneLine(run: { code: number | string; stderr: string }, line: string): void {
  assert.equal(run.stderr, `temp-inbox: could not start: ${line}\n`);
  assert.equal(run.code, 1);
}

const hostPort = (url: string, port: number) => `${new URL(url).hostname}:${new URL(url).port || port}`;

describe('start-up failures: one line naming the variable, exit 1', { timeout: 240_000 }, async () => {
  it('a taken HTTP_PORT or SMTP_PORT names the variable and the address', async () => {
    const port = await takenPort();
    assertOneLine(await failure({ HTTP_PORT: String(port) }), `HTTP_PORT: 127.0.0.1:${port} is already in use; set HTTP_PORT to a free port`);
    const run = await failure({ SMTP_PORT: String(port) });
    assertOneLine(run, `SMTP_PORT: 127.0.0.1:${port} is already in use; set SMTP_PORT to a free port`);
    assert.equal(run.stdout, '', 'no log line with a stack trace either');
  });

  it('an HTTP_HOST that is not an address of this machine names HTTP_HOST', async () => {
    assertOneLine(await failure({ HTTP_HOST: '192.0.2.1' }), 'HTTP_HOST: 192.0.2.1 is not an address of this machine; set HTTP_HOST to one of its addresses or 0.0.0.0');
  });

  it('a DATA_DIR that cannot be created names DATA_DIR', async () => {
    const file = join(dataDir(), 'a-file');
    writeFileSync(file, '');
    const dir = join(file, 'data');
    assertOneLine(await failure({ DATA_DIR: dir }), `DATA_DIR: cannot write to ${dir} (a part of the path is a file, not a directory); set DATA_DIR to a directory this user can write`);
  });

  // Permissions hold only for a user without privileges: run as nobody when the tests run as root.
  const asNobody = ['/usr/bin/setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'];
  const noSetpriv =
    process.getuid?.() !== 0 || !existsSync(asNobody[0]!)
      ? 'needs root and setpriv, to run the service as nobody'
      : spawnSync(asNobody[0]!, [...asNobody.slice(1), 'test', '-r', MAIN_SOURCE]).status !== 0
        ? 'nobody cannot read this checkout (it lies under a directory only its owner may enter), so cannot run the service'
        : false;
  it('as a user without privileges: a port below 1024 and a DATA_DIR it cannot write name SMTP_PORT and DATA_DIR', { skip: noSetpriv }, async () => {
    const parent = dataDir();
    chmodSync(parent, 0o755);
    const dir = join(parent, 'data');
    assertOneLine(await failure({ DATA_DIR: dir }, asNobody), `DATA_DIR: cannot write to ${dir} (permission denied); set DATA_DIR to a directory this user can write`);
    const writable = join(parent, 'writable');
    mkdirSync(writable, { mode: 0o700 });
    chownSync(writable, 65534, 65534);
    assertOneLine(
      await failure({ DATA_DIR: writable, SMTP_PORT: '25' }, asNobody),
      'SMTP_PORT: permission denied to listen on 127.0.0.1:25 (ports below 1024 need privileges); set SMTP_PORT to a port of 1024 or more, or grant CAP_NET_BIND_SERVICE',
    );
  });

  it('REDIS_URL at a closed port: Redis refused the connection', async () => {
    const port = await closedPort();
    assertOneLine(await failure({ REDIS_URL: `redis://127.0.0.1:${port}` }), `REDIS_URL: Redis at 127.0.0.1:${port} refused the connection`);
  });

  it('DATABASE_URL at a closed port: PostgreSQL refused the connection', async () => {
    const port = await closedPort();
    assertOneLine(await failure({ DATABASE_URL: `postgres://127.0.0.1:${port}/test` }), `DATABASE_URL: PostgreSQL at 127.0.0.1:${port} refused the connection`);
  });

  it('REDIS_URL or DATABASE_URL at a port that accepts and never answers: did not answer in time', async () => {
    // Both at once: each waits out its driver's 10 s connect time-out.
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    held.push(silent);
    const { port } = silent.address() as AddressInfo;
    const [redis, postgres] = await Promise.all([failure({ REDIS_URL: `redis://127.0.0.1:${port}` }), failure({ DATABASE_URL: `postgres://127.0.0.1:${port}/test` })]);
    assertOneLine(redis, `REDIS_URL: Redis at 127.0.0.1:${port} did not answer in time`);
    assertOneLine(postgres, `DATABASE_URL: PostgreSQL at 127.0.0.1:${port} did not answer in time`);
  });

  const noRedis = skipUnless('redis');
  it('REDIS_URL with a user Redis does not know: it refused the user name or password', { skip: noRedis }, async () => {
    const url = new URL(REDIS_URL);
    url.username = 'temp-inbox-no-such-user';
    url.password = 'wrong';
    assertOneLine(await failure({ REDIS_URL: url.href }), `REDIS_URL: Redis at ${hostPort(REDIS_URL, 6379)} refused the user name or password in REDIS_URL`);
  });

  const noPostgres = skipUnless('postgres');
  it('DATABASE_URL naming a database that does not exist, or a role that does not: what to fix', { skip: noPostgres }, async () => {
    const missing = new URL(PG_URL);
    missing.pathname = '/temp_inbox_no_such_database';
    assertOneLine(
      await failure({ DATABASE_URL: missing.href }),
      `DATABASE_URL: PostgreSQL at ${hostPort(PG_URL, 5432)} has no database "temp_inbox_no_such_database"; create it (createdb temp_inbox_no_such_database) or fix the name in DATABASE_URL`,
    );
    const stranger = new URL(PG_URL);
    stranger.username = 'temp_inbox_no_such_role';
    assertOneLine(
      await failure({ DATABASE_URL: stranger.href }),
      `DATABASE_URL: PostgreSQL at ${hostPort(PG_URL, 5432)} refused the login: role "temp_inbox_no_such_role" does not exist; fix the user name or password in DATABASE_URL`,
    );
  });
});

/** A POST with a body and exactly the headers given (fetch would add a Content-Type). */
function post(url: string, headers: Record<string, string>, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('a body that is not JSON', () => {
  it('415 says which content type to send, with or without a Content-Type', async () => {
    const inbox = await startTempInbox();
    try {
      const none = await post(`${inbox.url}/api/new_address`, {}, '{"name":"kit"}');
      assert.deepEqual(none, { status: 415, text: 'The request has a body but no Content-Type. Send the body as application/json (Content-Type: application/json).' });
      const form = await post(`${inbox.url}/api/new_address`, { 'content-type': 'application/x-www-form-urlencoded' }, 'name=kit');
      assert.deepEqual(form, { status: 415, text: 'Content-Type application/x-www-form-urlencoded is not accepted here. Send the body as application/json (Content-Type: application/json).' });
      const odd = await post(`${inbox.url}/api/new_address`, { 'content-type': 'x<script>' }, 'name=kit');
      assert.deepEqual(odd, { status: 415, text: 'That Content-Type is not accepted here. Send the body as application/json (Content-Type: application/json).' });
    } finally {
      await inbox.stop();
    }
  });
});
