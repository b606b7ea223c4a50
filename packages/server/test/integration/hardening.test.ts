// Findings of an attacker's review that are about set-up rather than traffic
// (docs/security.md): role names nobody may claim, file modes of DATA_DIR,
// TRUST_PROXY, and secrets never printed back.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { ConfigError, loadConfig } from '../../src/config/index.js';
import { resolveSecrets } from '../../src/config/secrets.js';
import { ADMIN_TOKEN } from '../helpers/admin.js';
import { client, createAddress, DOMAIN, message, sendMail, SmtpClient, startTestServer, type TestServer } from '../helpers/harness.js';

const servers: TestServer[] = [];
const dirs: string[] = [];
after(async () => {
  for (const s of servers) await s.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('role names', () => {
  it('the five names CAs mail to (Baseline Requirements 3.2.2.4.4), and spellings with separators, are refused with 400', async () => {
    const server = await startTestServer();
    servers.push(server);
    const api = client(server);
    const names = ['admin', 'administrator', 'webmaster', 'hostmaster', 'postmaster', 'Admin.istrator', 'post-master', 'host_master', 'web.master', 'a.d.m.i.n', 'mailer-daemon', 'ssl-admin', 'security', 'abuse', 'no-reply'];
    for (const name of names) {
      const res = await api('/api/new_address', { method: 'POST', body: { name } });
      assert.equal(res.status, 400, name);
      assert.equal(res.text, 'That name is reserved; choose another one.', name);
    }
    const ok = await api('/api/new_address', { method: 'POST', body: { name: 'jo.hn-doe_x' } });
    assert.equal(ok.status, 200, 'a name with separators that is no role name is fine');
    // No address can hold them, so SMTP refuses them too.
    const smtp = await SmtpClient.connect(server.smtpPort);
    await smtp.script([
      ['EHLO client.test', 250],
      ['MAIL FROM:<ca@example.org>', 250],
    ]);
    assert.match((await smtp.command(`RCPT TO:<administrator@${DOMAIN}>`)).text, /^550 5\.1\.1 /);
    await smtp.quit();
  });

  it('NAME_BLOCKLIST replaces the list and is folded the same way', async () => {
    const server = await startTestServer({ NAME_BLOCKLIST: 'team-lead' });
    servers.push(server);
    const api = client(server);
    assert.equal((await api('/api/new_address', { method: 'POST', body: { name: 'team.lead' } })).status, 400);
    assert.equal((await api('/api/new_address', { method: 'POST', body: { name: 'admin' } })).status, 200);
  });
});

describe('file modes of DATA_DIR', () => {
  const mode = (path: string) => statSync(path).mode & 0o777;

  it('a new DATA_DIR is 0700 and the database, its WAL and shared memory, and the secrets are 0600, whatever the umask', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'temp-inbox-modes-'));
    dirs.push(parent);
    const dataDir = join(parent, 'data dir with spaces');
    const old = process.umask(0o022);
    try {
      const server = await startTestServer({}, dataDir);
      servers.push(server);
      const { address } = await createAddress(server);
      assert.equal((await sendMail(server.smtpPort, { to: [address], message: message({ Subject: 'm' }, 'x') })).code, 250);
      assert.equal(mode(dataDir), 0o700);
      for (const f of ['temp-inbox.sqlite', 'temp-inbox.sqlite-wal', 'temp-inbox.sqlite-shm', 'secrets.json']) assert.equal(mode(join(dataDir, f)), 0o600, f);
    } finally {
      process.umask(old);
    }
  });

  it('an existing directory or file that others can read is reported at start-up, and left as it is', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'temp-inbox-loose-'));
    dirs.push(dataDir);
    chmodSync(dataDir, 0o755);
    writeFileSync(join(dataDir, 'temp-inbox.sqlite'), '');
    chmodSync(join(dataDir, 'temp-inbox.sqlite'), 0o644);
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(...chunk.toString().split('\n').filter(Boolean));
        done();
      },
    });
    const server = await startTestServer({}, dataDir, pino({ level: 'warn' }, sink));
    servers.push(server);
    const warnings = lines.map((l) => JSON.parse(l) as { level: number; msg: string }).filter((l) => l.level === 40);
    assert.ok(warnings.some((w) => w.msg.includes(`${dataDir} is mode 755`) && w.msg.includes('chmod 700')), JSON.stringify(warnings));
    assert.ok(warnings.some((w) => w.msg.includes('temp-inbox.sqlite is mode 644') && w.msg.includes('chmod 600')), JSON.stringify(warnings));
    assert.equal(mode(dataDir), 0o755, 'not changed behind the operator');
  });
});

describe('TRUST_PROXY', () => {
  it('true is refused at start-up, naming the variable', () => {
    assert.throws(() => loadConfig({ TRUST_PROXY: 'true' }), (err: unknown) => err instanceof ConfigError && /^TRUST_PROXY is invalid: expected a hop count/.test(err.message));
  });

  it('with TRUST_PROXY=1 the client cannot choose its rate-limit key by writing X-Forwarded-For', async () => {
    const server = await startTestServer({ TRUST_PROXY: '1', RATE_LIMIT_NEW_ADDRESS: '3/60' });
    servers.push(server);
    const api = client(server);
    const statuses: number[] = [];
    // The proxy (here the test itself, one hop) appends the real client; the left-most entries are the client's own.
    for (let i = 0; i < 5; i++) {
      statuses.push((await api('/api/new_address', { method: 'POST', body: {}, headers: { 'x-forwarded-for': `10.0.0.${i}, 203.0.113.7` } })).status);
    }
    assert.deepEqual(statuses, [200, 200, 200, 429, 429]);
    // Another real client behind the proxy has its own budget.
    assert.equal((await api('/api/new_address', { method: 'POST', body: {}, headers: { 'x-forwarded-for': '203.0.113.8' } })).status, 200);
  });
});

describe('secrets', () => {
  it('a refused JWT_SECRET or SESSION_SECRET is named with its rule, never printed', () => {
    for (const [name, secret] of [
      ['JWT_SECRET', 'short-but-secret-value'],
      ['JWT_SECRET', 'correct-horse-battery-staple-1'],
      ['SESSION_SECRET', 'correct-horse-battery-staple-1'],
    ] as const) {
      assert.throws(
        () => loadConfig({ [name]: secret }),
        (err: unknown) => err instanceof ConfigError && err.message.startsWith(`${name} is invalid: expected a secret of at least 32 characters`) && !err.message.includes(secret),
      );
    }
  });

  it('a long but trivial JWT_SECRET, SESSION_SECRET or ADMIN_TOKEN is refused with its rule; random ones and the harness\'s pass', () => {
    for (const [name, weak] of [
      ['JWT_SECRET', 'a'.repeat(32)],
      ['SESSION_SECRET', '0123456789abcdef'.repeat(3)],
      ['ADMIN_TOKEN', 'a'.repeat(32)],
      ['ADMIN_TOKEN', 'qwerty12'.repeat(5)],
    ] as const) {
      assert.throws(
        () => loadConfig({ [name]: weak }),
        (err: unknown) => err instanceof ConfigError && err.message.startsWith(`${name} is invalid: expected a `) && err.message.includes('not trivially weak') && !err.message.includes(weak),
      );
    }
    for (let i = 0; i < 200; i++) {
      const c = loadConfig({ JWT_SECRET: randomBytes(16).toString('hex'), SESSION_SECRET: randomBytes(32).toString('base64url'), ADMIN_TOKEN: randomBytes(16).toString('hex') });
      assert.ok(c.secrets.jwtSecret && c.secrets.sessionSecret && c.admin.token);
    }
    assert.equal(loadConfig({ ADMIN_TOKEN }).admin.token, ADMIN_TOKEN);
    const dir = mkdtempSync(join(tmpdir(), 'temp-inbox-secrets-'));
    try {
      const generated = resolveSecrets(dir, {});
      assert.equal(loadConfig({ JWT_SECRET: generated.jwtSecret, SESSION_SECRET: generated.sessionSecret }).secrets.jwtSecret, generated.jwtSecret);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('DATA_DIR may be any path, spaces included', () => {
    assert.equal(loadConfig({ DATA_DIR: '/var/lib/temp inbox' }).storage.dataDir, '/var/lib/temp inbox');
  });
});

