// The bounds of the authentication checks' DNS cache (mail/auth/auth-dns.ts, docs/security.md
// "Cached answers"): at most maxEntries answers (10,000 by default), the least recently
// used dropped first, and an answer over 16 KiB used but not kept. Against the real test
// DNS server; what is kept is seen by what is asked again.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { createAuthDns } from '../../../src/mail/auth/auth-dns.js';
import { startTestDns, type TestDns } from '../../helpers/dns-server.js';

describe('the authentication DNS cache', { timeout: 120_000 }, () => {
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
