// The configuration contract (docs/deploy.md "Configuration").
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ConfigError, CONFIG_VARIABLES, loadConfig, parseTrustProxy } from '../../src/config/index.js';
import { parseDuration as parseServerDuration } from '../../src/config/duration.js';
import { parseDuration as parseCliDuration } from '../../../client/src/duration.js';
import { withConfigTable } from '../../src/config/table.js';
import { runExpectingFailure, startProcess } from '../helpers/process.js';
import { tmp } from '../helpers/harness.js';

describe('configuration', () => {
  const dirs: string[] = [];
  const dataDir = (prefix: string) => {
    const dir = tmp(prefix);
    dirs.push(dir);
    return dir;
  };
  after(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
  it('has the documented defaults', () => {
    const c = loadConfig({});
    assert.equal(c.http.port, 8080);
    assert.equal(c.smtp.port, 2525);
    assert.equal(c.smtp.idleTimeoutMs, 60_000, 'SMTP_IDLE_TIMEOUT: a silent client is closed after a minute');
    assert.equal(loadConfig({ SMTP_IDLE_TIMEOUT: '90s' }).smtp.idleTimeoutMs, 90_000);
    assert.equal(c.http.host, '0.0.0.0');
    assert.equal(c.storage.dataDir, './data');
    assert.deepEqual(c.mail.domains, ['temp-inbox.localhost']);
    assert.equal(c.mail.customNames, true);
    // The five names CAs mail to (Baseline Requirements 3.2.2.4.4) and the RFC 2142 roles, among others.
    for (const name of ['admin', 'administrator', 'webmaster', 'hostmaster', 'postmaster', 'abuse', 'security', 'noc', 'mailerdaemon', 'noreply']) {
      assert.ok(c.mail.nameBlocklist.includes(name), name);
    }
    assert.equal(c.mail.maxMessageBytes, 10485760);
    assert.equal(c.mail.mailTtlMs, 7 * 86_400_000);
    assert.equal(c.mail.addressTtlMs, 7 * 86_400_000);
    assert.deepEqual(c.limits.routes.NEW_ADDRESS, { max: 10, windowSeconds: 60 });
    assert.deepEqual(c.limits.routes.MAILS, { max: 60, windowSeconds: 60 });
    assert.deepEqual(c.limits.routes.SWITCH_ADDRESS, { max: 30, windowSeconds: 60 });
    assert.equal(c.http.trustProxy, undefined);
    assert.equal(c.challenge.turnstileSecretKey, undefined);
  });

  it('parses every documented form', () => {
    const c = loadConfig({
      MAIL_DOMAINS: 'A.test, b.test',
      RATE_LIMIT_MAILS: '5/10',
      RATE_LIMIT_MAIL: '0',
      CUSTOM_NAMES: 'false',
      MAIL_TTL: '12h',
      TRUST_PROXY: '10.0.0.0/8,127.0.0.1',
      DATABASE_URL: 'postgres://u@h/db',
    });
    assert.deepEqual(c.mail.domains, ['a.test', 'b.test']);
    assert.deepEqual(c.limits.routes.MAILS, { max: 5, windowSeconds: 10 });
    assert.equal(c.limits.routes.MAIL.max, 0);
    assert.equal(c.mail.customNames, false);
    assert.equal(c.mail.mailTtlMs, 12 * 3_600_000);
    assert.deepEqual(c.http.trustProxy, ['10.0.0.0/8', '127.0.0.1']);
    assert.throws(() => parseTrustProxy('true'), ConfigError);
    assert.equal(parseTrustProxy('false'), false);
    assert.equal(parseTrustProxy('2'), 2);
  });

  it('reads AUTH_CHECKS and DNS_SERVERS (ip, ip:port, IPv6 bare or as [addr]:port)', () => {
    const defaults = loadConfig({});
    assert.equal(defaults.mailAuth.checks, true);
    assert.equal(defaults.mailAuth.dnsServers, undefined, 'unset: the system resolvers');
    assert.equal(loadConfig({ AUTH_CHECKS: 'off' }).mailAuth.checks, false);
    assert.equal(loadConfig({ AUTH_CHECKS: 'on' }).mailAuth.checks, true);
    assert.deepEqual(loadConfig({ DNS_SERVERS: '192.0.2.1, 127.0.0.1:5353,2001:db8::1,[2001:db8::2]:53,[::1]' }).mailAuth.dnsServers, [
      '192.0.2.1',
      '127.0.0.1:5353',
      '2001:db8::1',
      '[2001:db8::2]:53',
      '::1',
    ]);
    assert.equal(loadConfig({ DNS_SERVERS: '' }).mailAuth.dnsServers, undefined);
    for (const value of ['dns.example', '127.0.0.1:0', '127.0.0.1:65536', '127.0.0.1:', '1.2.3.4,,5.6.7.8', '[1.2.3.4]:53', '2001:db8::1:53x', '[2001:db8::1]:', 'x:53', Array(9).fill('127.0.0.1').join(',')]) {
      assert.throws(
        () => loadConfig({ DNS_SERVERS: value }),
        (err: unknown) => err instanceof ConfigError && err.message.startsWith('DNS_SERVERS is invalid: expected a comma list of up to 8 resolvers'),
        value,
      );
    }
  });

  it('reads MAILTM_API (on by default) and the mail.tm rate limits', () => {
    const defaults = loadConfig({});
    assert.equal(defaults.mailtm.api, true);
    assert.deepEqual(defaults.limits.routes.MAILTM_TOKEN, { max: 10, windowSeconds: 60 });
    assert.deepEqual(defaults.limits.routes.MAILTM_ACCOUNTS, { max: 10, windowSeconds: 60 });
    assert.deepEqual(defaults.limits.routes.MAILTM, { max: 480, windowSeconds: 60 }, "mail.tm's 8 a second");
    assert.equal(loadConfig({ MAILTM_API: 'off' }).mailtm.api, false);
    assert.equal(loadConfig({ MAILTM_API: 'on' }).mailtm.api, true);
    assert.deepEqual(loadConfig({ RATE_LIMIT_MAILTM_TOKEN: '5/600' }).limits.routes.MAILTM_TOKEN, { max: 5, windowSeconds: 600 });
  });

  it('reads durations with one grammar, the CLI\'s --timeout too: 90s, 1.5h, 7d, 1w, bare seconds', () => {
    const cases: [string, number][] = [
      ['500ms', 500], ['90s', 90_000], ['15m', 900_000], ['1.5h', 5_400_000], ['12h', 43_200_000],
      ['1d', 86_400_000], ['7d', 604_800_000], ['1w', 604_800_000], ['2 days', 172_800_000], ['30', 30_000], ['1.5', 1500],
    ];
    for (const [raw, ms] of cases) {
      assert.equal(loadConfig({ MAIL_TTL: raw }).mail.mailTtlMs, ms, raw);
      assert.equal(parseServerDuration(raw), ms, raw);
      assert.equal(parseCliDuration(raw), ms, `the CLI agrees on ${raw}`);
    }
    for (const raw of ['', 'soon', '0', '0s', '-1h', '1h30m', '1.5.h', 'x'.repeat(200)]) {
      assert.equal(parseServerDuration(raw), undefined, raw);
      assert.equal(parseCliDuration(raw), undefined, `the CLI refuses ${raw} too`);
    }
    // Every duration the variables table shows as a default is valid.
    for (const v of CONFIG_VARIABLES.filter((x) => x.accepts.startsWith('duration') && !['0', ''].includes(x.default))) {
      assert.ok(parseServerDuration(v.default) !== undefined, `${v.name}=${v.default}`);
    }
  });

  it('reads SMTP_GREETING_DELAY: 0 (greet at once) by default, a duration up to 1m', () => {
    assert.equal(loadConfig({}).smtp.greetingDelayMs, 0);
    assert.equal(loadConfig({ SMTP_GREETING_DELAY: '0' }).smtp.greetingDelayMs, 0);
    assert.equal(loadConfig({ SMTP_GREETING_DELAY: '250ms' }).smtp.greetingDelayMs, 250);
    assert.equal(loadConfig({ SMTP_GREETING_DELAY: '1m' }).smtp.greetingDelayMs, 60_000, 'the limit');
    assert.throws(
      () => loadConfig({ SMTP_GREETING_DELAY: '60001ms' }),
      (err: unknown) => err instanceof ConfigError && err.message.startsWith('SMTP_GREETING_DELAY is invalid: expected at most 1m'),
      'one past the limit',
    );
  });

  it('reads the per-client SMTP limits: trusted networks, the in-flight share, the DATA rate, the day\'s bytes, the free disk space', () => {
    const d = loadConfig({});
    assert.deepEqual(d.smtp.trustedNetworks, ['127.0.0.0/8', '::1/128']);
    assert.equal(d.smtp.clientInflightBytes, 16 * 1024 * 1024, 'an eighth of SMTP_INFLIGHT_BYTES');
    assert.deepEqual([d.smtp.dataMinRate, d.smtp.dataRateWindowMs], [500, 30_000]);
    assert.equal(d.limits.smtp.dailyBytes, 1024 ** 3);
    assert.deepEqual(d.limits.smtp.newAddresses, { max: 60, windowSeconds: 60 });
    assert.deepEqual(d.storage.diskMinFree, { bytes: 1024 ** 3, percent: 5 });
    assert.deepEqual(loadConfig({ SMTP_TRUSTED_NETWORKS: '' }).smtp.trustedNetworks, []);
    assert.deepEqual(loadConfig({ SMTP_TRUSTED_NETWORKS: '10.0.0.0/8, 2001:db8::/32,192.0.2.7' }).smtp.trustedNetworks, ['10.0.0.0/8', '2001:db8::/32', '192.0.2.7']);
    assert.equal(loadConfig({ SMTP_INFLIGHT_BYTES: '10485760' }).smtp.clientInflightBytes, 10485760, 'at least MAX_MESSAGE_BYTES');
    assert.deepEqual(loadConfig({ DISK_MIN_FREE: '5%' }).storage.diskMinFree, { bytes: Number.MAX_SAFE_INTEGER, percent: 5 });
    assert.deepEqual(loadConfig({ DISK_MIN_FREE: '0' }).storage.diskMinFree, { bytes: 0, percent: 100 });
    const off = loadConfig({ RATE_LIMITS: 'off' });
    assert.deepEqual([off.limits.smtp.dailyBytes, off.limits.smtp.newAddresses.max], [0, 0]);
    assert.throws(
      () => loadConfig({ SMTP_CLIENT_INFLIGHT_BYTES: '1000' }),
      (err: unknown) => err instanceof ConfigError && err.message.startsWith('SMTP_CLIENT_INFLIGHT_BYTES must be at least MAX_MESSAGE_BYTES'),
    );
  });

  const bad: [string, string][] = [
    ['SMTP_TRUSTED_NETWORKS', '10.0.0.0/33'],
    ['SMTP_TRUSTED_NETWORKS', 'localhost'],
    ['DISK_MIN_FREE', 'lots'],
    ['DISK_MIN_FREE', '150%'],
    ['SMTP_DATA_MIN_RATE', 'fast'],
    ['SMTP_DAILY_BYTES', '1GiB'],
    ['HTTP_PORT', '70000'],
    ['SMTP_PORT', 'abc'],
    ['MAIL_DOMAINS', 'not a domain'],
    ['CUSTOM_NAMES', 'maybe'],
    ['MAILTM_API', 'sometimes'],
    ['RATE_LIMIT_MAILS', '10'],
    ['RATE_LIMIT_NEW_ADDRESS', '0/60'],
    ['MAX_MESSAGE_BYTES', '-5'],
    ['MAIL_TTL', 'forever'],
    ['MAIL_TTL', '0s'],
    ['MAIL_TTL', '-1h'],
    ['MAIL_TTL', '1h30m'],
    ['SWEEP_INTERVAL', '1.5.h'],
    ['TRUST_PROXY', '999.1.1.1'],
    // true would key rate limits on the left-most X-Forwarded-For entry, which the client writes.
    ['TRUST_PROXY', 'true'],
    ['JWT_SECRET', 'correct-horse-battery-staple-1'],
    ['DATABASE_URL', 'mysql://x'],
    ['REDIS_URL', 'http://x'],
    ['JWT_SECRET', 'short'],
    // Long enough, but trivial: one character, a repeated pattern, a run.
    ['JWT_SECRET', 'a'.repeat(32)],
    ['JWT_SECRET', 'abcd1234'.repeat(4)],
    ['SESSION_SECRET', 'abcdefghijklmnopqrstuvwxyz0123456789'],
    ['ADMIN_TOKEN', 'a'.repeat(32)],
    ['ADMIN_TOKEN', 'x1'.repeat(20)],
    ['TURNSTILE_VERIFY_URL', 'ftp://x'],
    ['LOG_LEVEL', 'loud'],
    ['AUTH_CHECKS', 'sometimes'],
    ['DNS_SERVERS', 'resolver.example'],
    ['SMTP_GREETING_DELAY', 'soon'],
    ['SMTP_GREETING_DELAY', '-1s'],
    ['SMTP_GREETING_DELAY', '2m'],
  ];
  for (const [name, value] of bad) {
    it(`refuses ${name}=${value} with one line naming the variable`, () => {
      assert.throws(
        () => loadConfig({ [name]: value }),
        (err: unknown) =>
          err instanceof ConfigError &&
          err.message.startsWith(`${name} is invalid: expected`) &&
          // The value is never repeated: it may be a secret typed into the wrong variable.
          (value.length < 3 || !err.message.includes(value)) &&
          !err.message.includes('\n'),
      );
    });
  }

  it('stops start-up with one clear line and exit code 2 on a bad value', async () => {
    const { code, stderr } = await runExpectingFailure({ HTTP_PORT: 'eighty', DATA_DIR: dataDir('temp-inbox-cfg-') });
    assert.equal(code, 2);
    assert.equal(stderr.trim().split('\n').length, 1);
    assert.match(stderr, /^temp-inbox: HTTP_PORT is invalid: expected a port number/);
  });

  it('starts and stops on a fresh data directory with no other service', async () => {
    const proc = await startProcess({ DATA_DIR: dataDir('temp-inbox-fresh-') });
    const res = await fetch(`${proc.httpUrl}/health_check`);
    assert.equal(res.status, 200);
    proc.child.kill('SIGINT');
    assert.equal(await proc.exited, 0);
  });

  it('documents every variable in the docs/deploy.md table, generated from the schema', () => {
    const doc = readFileSync(fileURLToPath(new URL('../../../../docs/deploy.md', import.meta.url)), 'utf8');
    assert.equal(withConfigTable(doc), doc, 'docs/deploy.md table is stale: run npm run docs:config');
    for (const v of CONFIG_VARIABLES) assert.ok(doc.includes(`\`${v.name}\``), v.name);
  });
});
