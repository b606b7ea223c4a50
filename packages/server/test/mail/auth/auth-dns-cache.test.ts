// The bounds of the authentication checks' DNS cache (mail/auth/auth-dns.ts, docs/security.md
// "Cached answers"): at most maxEntries answers (10,000 by default) and 4 MiB of them, the
// least recently used dropped first, and an answer over 16 KiB used but not kept. Against the real test
// DNS server; what is kept is seen by what is asked again.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { createAuthDns } from '../../../src/mail/auth/auth-dns.js';
import { startTestDns, type TestDns } from '../../helpers/dns-server.js';

describe('the authentication DNS cache', { timeout: 300_000 }, () => {
  let testDns: TestDns;
  before(async () => {
    // Every name under cache.test has a small TXT record.
    testDns = await startTestDns({ answer: (name) => (name.endsWith('.cache.test') ? { TXT: [`v=${name}`] } : undefined) });
  });
  after(() => testDns.close());

  const asked = (name: string) => testDns.queries.filter((q) => q === `TXT ${name}`).length;

  it('holds maxEntries answers, dropping the least recently used first', async () => {
    const dns = createAuthDns({ servers: [testDns.server], maxEntries: 2 });
    const resolve = (name: string) => dns.forMail(performance.now() + 10_000).resolve(name, 'TXT');
    await resolve('a.cache.test');
    await resolve('b.cache.test');
    await resolve('a.cache.test'); // a is now the more recently used
    assert.equal(asked('a.cache.test'), 1, 'a kept');
    await resolve('c.cache.test');
    assert.equal(dns.cached, 2);
    await resolve('a.cache.test');
    assert.equal(asked('a.cache.test'), 1, 'a, used more recently, is still kept');
    await resolve('b.cache.test');
    assert.equal(asked('b.cache.test'), 2, 'b, the least recently used, was dropped and is asked again');
  });

  it('holds 10,000 answers by default', async () => {
    const dns = createAuthDns({ servers: [testDns.server] });
    for (let i = 0; i < 10_001; i += 50) {
      const lookups = dns.forMail(performance.now() + 30_000);
      await Promise.all(Array.from({ length: Math.min(50, 10_001 - i) }, (_, j) => lookups.resolve(`n${i + j}.cache.test`, 'TXT')));
    }
    assert.equal(dns.cached, 10_000);
  });

  it('holds 4 MiB of answers by default: 10,050 answers of 400 bytes pass it before 10,000 entries do', async () => {
    // 400 bytes fit a UDP answer, so this is as quick as the case above; at 400 bytes and more
    // each, 10,000 answers would be over 4 MiB, so the bytes bound is the one that holds.
    const size = 400;
    const names = Array.from({ length: 10_050 }, (_, i) => `m${String(i).padStart(5, '0')}.bytes-cache.test`);
    for (const name of names) testDns.zone.set(name, { TXT: ['y'.repeat(size)] });
    const dns = createAuthDns({ servers: [testDns.server] });
    for (let i = 0; i < names.length; i += 50) {
      const lookups = dns.forMail(performance.now() + 30_000);
      await Promise.all(names.slice(i, i + 50).map((name) => lookups.resolve(name, 'TXT')));
    }
    // Each kept answer counts its bytes, its key ("TXT " and the name) and under 64 bytes of framing.
    const key = `TXT ${names[0]}`.length;
    const fit = [Math.floor((4 * 1024 * 1024) / (size + key + 64)), Math.floor((4 * 1024 * 1024) / (size + key))];
    assert.ok(fit[1]! < 10_000, 'the bytes bound is below the entries bound here');
    assert.ok(dns.cached >= fit[0]! && dns.cached <= fit[1]!, `${dns.cached} answers kept, not ${fit[0]} to ${fit[1]}`);
    // The least recently used went first: the newest name is kept, the oldest is asked again.
    const [first, last] = [names[0]!, names.at(-1)!];
    const before = [asked(first), asked(last)];
    await dns.forMail(performance.now() + 10_000).resolve(last, 'TXT');
    await dns.forMail(performance.now() + 10_000).resolve(first, 'TXT');
    assert.deepEqual([asked(first), asked(last)], [before[0]! + 1, before[1]!], 'the oldest asked again, the newest from the cache');
  });

  it('uses an answer over 16 KiB but does not keep it', async () => {
    testDns.zone.set('big.cache.test', { TXT: ['x'.repeat(17 * 1024)] });
    testDns.zone.set('small.cache.test', { TXT: ['x'.repeat(15 * 1024)] });
    const dns = createAuthDns({ servers: [testDns.server] });
    const resolve = (name: string) => dns.forMail(performance.now() + 10_000).resolve(name, 'TXT');
    for (const name of ['big.cache.test', 'small.cache.test']) {
      const answer = (await resolve(name)) as string[][];
      assert.equal(answer[0]!.join('').length, name.startsWith('big') ? 17 * 1024 : 15 * 1024, `${name} is answered whole`);
    }
    assert.equal(dns.cached, 1, 'only the smaller answer is kept');
    const bigBefore = asked('big.cache.test');
    const smallBefore = asked('small.cache.test');
    await resolve('big.cache.test');
    await resolve('small.cache.test');
    assert.ok(asked('big.cache.test') > bigBefore, 'the large answer is asked again');
    assert.equal(asked('small.cache.test'), smallBefore, 'the one under 16 KiB comes from the cache');
  });
});
