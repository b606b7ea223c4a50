// Guessing mail.tm passwords (docs/security.md "mail.tm accounts"): failed logins lock an
// account out however many /64s they come from, an address that does not exist alike;
// a network (IPv6 /48 and /32, IPv4 /24) that keeps failing is locked out as a whole; the
// hashing queue takes turns by network, so a flood from one /48 delays another's login
// by a hash or two; and the counts hold across two nodes sharing Redis. Clients are told
// apart by X-Forwarded-For from 127.0.0.1 (TRUST_PROXY=1), as behind a proxy.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DOMAIN, request, startTestServer, type HttpResult, type TestServer } from '../helpers/harness.js';
import { twoNodes } from '../helpers/nodes.js';
import { hashesStarted } from '../../src/domain/passwords.js';
import { skipUnless } from '../helpers/services.js';

/** POST /mailtm/token as the client at `ip`. */
function login(server: TestServer, ip: string, address: string, password: string): Promise<HttpResult> {
  return request(server.httpUrl, '/mailtm/token', { method: 'POST', body: { address, password }, headers: { 'x-forwarded-for': ip } });
}

async function register(server: TestServer, name: string, password: string): Promise<string> {
  const address = `${name}@${DOMAIN}`;
  const res = await request(server.httpUrl, '/mailtm/accounts', { method: 'POST', body: { address, password }, headers: { 'x-forwarded-for': '198.51.100.7' } });
  assert.equal(res.status, 201, res.text);
  return address;
}

/** The /64s 2001:db8:<site>:<n>::/64, n = 0..count-1, of one /48. */
const sixtyFours = (site: number, count: number) => Array.from({ length: count }, (_, n) => `2001:db8:${site.toString(16)}:${n.toString(16)}::${(n % 250) + 1}`);

function assertLocked(res: HttpResult, what: string): void {
  assert.equal(res.status, 429, `${what}: ${res.status} ${res.text}`);
  const wait = Number(res.headers.get('retry-after'));
  assert.ok(Number.isInteger(wait) && wait >= 1 && wait <= 900, `${what}: Retry-After ${res.headers.get('retry-after')}`);
  assert.equal(res.json['hydra:description'], 'Too many failed logins; retry later.', what);
}

const BASE = { MAIL_DOMAINS: DOMAIN, TRUST_PROXY: '1' };
/**
 * A server without lock-outs, for the flood of guesses and the full queue: their addresses
 * and networks are their own, and the hashing queue is the process's whoever's server asks.
 */
let unlocked: Promise<TestServer> | undefined;
const unlockedServer = () => (unlocked ??= startTestServer({ ...BASE, MAILTM_LOGIN_FAILURES: '0', MAILTM_LOGIN_FAILURES_NETWORK: '0', MAILTM_LOGIN_FAILURES_PROVIDER: '0' }));
after(async () => (await unlocked)?.close());

describe('mail.tm logins: failed guesses', { timeout: 300_000 }, () => {
  it('MAILTM_LOGIN_FAILURES: 10 failed guesses from the /64s of one /48 lock the account (429, Retry-After), 20 at once included; an unknown address alike', async () => {
    const server = await startTestServer({ ...BASE, MAILTM_LOGIN_FAILURES: '10/900', MAILTM_LOGIN_FAILURES_NETWORK: '0', MAILTM_LOGIN_FAILURES_PROVIDER: '0' });
    try {
      const victim = await register(server, 'victim', 'the-right-one');
      const ips = sixtyFours(0x10, 40);
      /** 20 guesses at once, then one at a time from the next /64s until refused: how many were checked (401). */
      async function guessUntilLocked(address: string): Promise<number> {
        const wave = await Promise.all(ips.slice(0, 20).map((ip, i) => login(server, ip, address, `guess-${i}`)));
        for (const r of wave) assert.ok(r.status === 401 || r.status === 429, `${r.status} ${r.text}`);
        let checked = wave.filter((r) => r.status === 401).length;
        for (const ip of ips.slice(20)) {
          const r = await login(server, ip, address, 'another-guess');
          if (r.status !== 401) {
            assertLocked(r, ip);
            break;
          }
          checked++;
        }
        return checked;
      }
      // Concurrent guesses do not overshoot: exactly 10 are checked, whatever their order.
      assert.equal(await guessUntilLocked(victim), 10);
      // Every later guess from the other /64s, and the right password too: locked, not checked.
      for (const ip of ips.slice(30)) assertLocked(await login(server, ip, victim, 'another-guess'), ip);
      assertLocked(await login(server, '203.0.113.9', victim, 'the-right-one'), 'the right password from elsewhere, while locked');
      assertLocked(await login(server, ips[0]!, victim.toUpperCase(), 'x'), 'the same address in capitals');

      // An address that does not exist is locked after as many guesses, answered the same.
      const ghost = `nobody-here@${DOMAIN}`;
      assert.equal(await guessUntilLocked(ghost), 10);
      const locked = await login(server, ips[30]!, ghost, 'x');
      const real = await login(server, ips[30]!, victim, 'x');
      assertLocked(locked, 'unknown address');
      assert.deepEqual([locked.status, locked.json, locked.headers.get('content-type')], [real.status, real.json, real.headers.get('content-type')], 'the same answer');

      // Another account is not touched by the lock.
      const other = await register(server, 'bystander', 'pw');
      assert.equal((await login(server, ips[0]!, other, 'pw')).status, 200);
    } finally {
      await server.close();
    }
  });

  it('a right password gives its attempt back: logins that succeed never lock the account', async () => {
    const server = await startTestServer({ ...BASE, MAILTM_LOGIN_FAILURES: '3/900' });
    try {
      const user = await register(server, 'often', 'pw');
      for (let i = 0; i < 6; i++) assert.equal((await login(server, '198.51.100.20', user, 'pw')).status, 200, `login ${i}`);
      for (let i = 0; i < 2; i++) assert.equal((await login(server, '198.51.100.20', user, 'typo')).status, 401);
      assert.equal((await login(server, '198.51.100.20', user, 'pw')).status, 200, 'two failures of three');
      assert.equal((await login(server, '198.51.100.20', user, 'typo')).status, 401);
      assertLocked(await login(server, '198.51.100.20', user, 'pw'), 'the third failure locks');
    } finally {
      await server.close();
    }
  });

  it('MAILTM_LOGIN_FAILURES_NETWORK and _PROVIDER: a /48, a /32 and an IPv4 /24 that keep failing are locked out as wholes; their neighbours are not', async () => {
    const server = await startTestServer({ ...BASE, MAILTM_LOGIN_FAILURES: '0', MAILTM_LOGIN_FAILURES_NETWORK: '10/900', MAILTM_LOGIN_FAILURES_PROVIDER: '15/900' });
    try {
      const user = await register(server, 'someone', 'pw');
      const guess = (ip: string, i: number) => login(server, ip, `name-${i}@${DOMAIN}`, 'x');
      // 10 failures spread over 10 /64s (a different address each) of 2001:db8:20::/48.
      for (const [i, ip] of sixtyFours(0x20, 10).entries()) assert.equal((await guess(ip, i)).status, 401, ip);
      assertLocked(await guess('2001:db8:20:ffff::1', 99), 'a fresh /64 of the same /48');
      assertLocked(await login(server, '2001:db8:20:1234::5', user, 'pw'), 'the right password from that /48');
      // Another /48 of the same /32 still logs in; 5 more failures there (fewer than its own 10) lock the whole /32.
      assert.equal((await login(server, '2001:db8:21::1', user, 'pw')).status, 200, 'another /48');
      for (let i = 0; i < 5; i++) assert.equal((await guess(`2001:db8:21:${i}::1`, 100 + i)).status, 401);
      assertLocked(await guess('2001:db8:22::1', 200), 'a third /48 of the same /32');
      assert.equal((await login(server, '2001:db9::1', user, 'pw')).status, 200, 'another /32');
      // IPv4: the /24.
      for (let i = 1; i <= 10; i++) assert.equal((await guess(`203.0.113.${i}`, 300 + i)).status, 401);
      assertLocked(await guess('203.0.113.200', 400), 'another address of the /24');
      assert.equal((await login(server, '203.0.114.1', user, 'pw')).status, 200, 'the next /24');
    } finally {
      await server.close();
    }
  });

  it("a flood of guesses from 40 /64s of one /48 delays another network's login by a few hashes, not the queue", async (t) => {
    // No lock-outs here: the guesses keep the hashing queue as full as it lets one network fill it.
    const server = await unlockedServer();
    const user = await register(server, 'real-user', 'pw');
    // One login alone: about one hash.
    const alone: number[] = [];
    for (let i = 0; i < 3; i++) {
      const t = performance.now();
      assert.equal((await login(server, '198.51.100.50', user, 'pw')).status, 200);
      alone.push(performance.now() - t);
    }
    const hashMs = Math.min(...alone);
    let stop = false;
    const statuses = new Map<number | string, number>();
    const ips = sixtyFours(0x30, 40);
    // 80 guessers, two per /64, each guessing again as soon as it is answered.
    const flood = Promise.all(
      Array.from({ length: 80 }, async (_, g) => {
        for (let i = 0; !stop; i++) {
          const r = await login(server, ips[g % 40]!, `ghost-${g}-${i}@${DOMAIN}`, 'x').catch((err: Error) => ({ status: err.message }) as const);
          statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
          // Refused at once: a short pause, so that the guessers do not only spin.
          if (r.status !== 401) await new Promise((resolve) => setTimeout(resolve, 20));
        }
      }),
    );
    // Until the flood has had guesses checked.
    const deadline = Date.now() + 30_000;
    while ((statuses.get(401) ?? 0) < 10 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const took: number[] = [];
    const hashesMeanwhile: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t = performance.now();
      const before = hashesStarted();
      const res = await login(server, `2001:db8:99:${i}::1`, user, 'pw');
      hashesMeanwhile.push(hashesStarted() - before);
      took.push(performance.now() - t);
      assert.equal(res.status, 200, res.text);
    }
    stop = true;
    await flood;
    const report = `the real user's logins took ${took.map(Math.round).join(', ')} ms with ${hashesMeanwhile.join(', ')} hashes started meanwhile; one hash alone ${Math.round(hashMs)} ms; flood ${JSON.stringify([...statuses])}`;
    t.diagnostic(report);
    // Counted in hashes, not time (the machine's noise is not the queue's): the flood's one turn, its own, what the other
    // slot starts while its own runs and until its answer is read (5 to 8 measured). Behind the whole queue: 64 and more.
    assert.ok(Math.max(...hashesMeanwhile) <= 12, report);
    assert.ok((statuses.get(429) ?? 0) > 0, "the flood's guesses past its network's share are refused at once");
    for (const s of statuses.keys()) assert.ok(s === 401 || s === 429, `status ${s}`);
  });
});

const skip = skipUnless('postgres', 'redis');

describe('mail.tm logins: two nodes sharing Redis', { timeout: 120_000 }, () => {
  const nodes = twoNodes('mtl', skip, { ...BASE, MAILTM_LOGIN_FAILURES: '6/900' });

  it('failed guesses count across the nodes: three on each lock the account on both', { skip }, async () => {
    const address = await register(nodes.a, 'shared', 'pw');
    for (let i = 0; i < 3; i++) assert.equal((await login(nodes.a, `2001:db8:40:${i}::1`, address, `a-${i}`)).status, 401);
    for (let i = 0; i < 3; i++) assert.equal((await login(nodes.b, `2001:db8:41:${i}::1`, address, `b-${i}`)).status, 401);
    assertLocked(await login(nodes.a, '198.51.100.60', address, 'pw'), 'node a');
    assertLocked(await login(nodes.b, '198.51.100.61', address, 'pw'), 'node b');
  });
});

describe('mail.tm: the password-hashing queue', { timeout: 120_000 }, () => {
  it('full (2 hashing, 64 waiting), one more account is 503 with Retry-After: 1; the rest are created', async () => {
    // Account creations: the lock-outs (off on this server) count failed logins only.
    const server = await unlockedServer();
    // 30 networks (/24s) with 4 each: no network passes its own share (MAX_QUEUED_PER_NETWORK,
    // a 429), but 120 at once pass what the whole queue holds.
    const tries = Array.from({ length: 120 }, (_, i) =>
      request(server.httpUrl, '/mailtm/accounts', {
        method: 'POST',
        body: { address: `queue-${i}@${DOMAIN}`, password: 'a long enough password' },
        headers: { 'x-forwarded-for': `198.51.${Math.floor(i / 4)}.7` },
      }),
    );
    const answers = await Promise.all(tries);
    const refused = answers.filter((r) => r.status === 503);
    assert.deepEqual([...new Set(answers.map((r) => r.status))].sort(), [201, 503], answers.map((r) => `${r.status} ${r.text}`).join('\n'));
    assert.ok(answers.length - refused.length >= 66, `${answers.length - refused.length} created: the 2 hashing and the 64 waiting at least`);
    for (const r of refused) {
      assert.equal(r.headers.get('retry-after'), '1');
      assert.equal(r.json['hydra:description'], 'Too many password checks at once; retry in a moment.');
    }
  });
});
