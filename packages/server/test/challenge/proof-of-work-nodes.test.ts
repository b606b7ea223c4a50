// CHALLENGE=pow on several nodes (docs/decisions.md "Bot challenge"): nodes that share
// SESSION_SECRET accept each other's challenges, and Redis (REDIS_URL) holds the record
// of spent ones, so a solution spent on one node is refused on every other. While
// Redis does not answer, no request fails because of it: single use then holds per node.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { request, startTestServer, type TestServer } from '../helpers/harness.js';
import { fetchChallenge, powToken, solutionOf, solvedToken } from '../helpers/pow.js';
import { REDIS_URL, serviceAvailable } from '../helpers/services.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';

const ready = serviceAvailable('redis');
const newAddress = (server: TestServer, cf_token: string) => request(server.httpUrl, '/api/new_address', { method: 'POST', body: { cf_token } });

describe('CHALLENGE=pow on two nodes sharing Redis', { skip: !ready && 'Redis is not available' }, () => {
  // Each run its own key prefix, so runs never see each other's keys.
  const prefix = `powtest:${process.pid}:${randomBytes(4).toString('hex')}:`;
  const env = { CHALLENGE: 'pow', REDIS_URL, REDIS_KEY_PREFIX: prefix, SESSION_SECRET: randomBytes(32).toString('hex'), JWT_SECRET: randomBytes(32).toString('hex') };
  let a: TestServer;
  let b: TestServer;
  let redis: Redis;
  before(async () => {
    a = await startTestServer(env);
    b = await startTestServer(env);
    redis = new Redis(REDIS_URL);
  });
  after(async () => {
    await a?.close();
    await b?.close();
    if (redis) {
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length) await redis.del(...keys);
      await redis.quit();
    }
  });

  it('a challenge issued by one node is solved on another; replayed on either, it is refused', async () => {
    const solution = solutionOf(await fetchChallenge(a.httpUrl));
    const first = await newAddress(b, powToken(solution));
    assert.equal(first.status, 200, first.text);
    for (const node of [a, b]) {
      const replay = await newAddress(node, powToken(solution));
      assert.equal(replay.status, 400, replay.text);
      assert.match(replay.headers.get('content-type') ?? '', /^text\/plain/);
      assert.match(replay.text, /already used/);
    }
  });

  it('the same solution sent to both nodes at once creates one address', async () => {
    for (let round = 0; round < 5; round++) {
      const token = await solvedToken(a.httpUrl);
      const answers = await Promise.all([newAddress(a, token), newAddress(b, token), newAddress(a, token), newAddress(b, token)]);
      assert.deepEqual(
        answers.map((r) => r.status).sort(),
        [200, 400, 400, 400],
        answers.map((r) => `${r.status} ${r.text}`).join('; '),
      );
    }
  });

  it('Redis remembers a spent challenge until shortly after it expires (SET NX with an expiry), not forever', async () => {
    const c = await fetchChallenge(a.httpUrl);
    assert.equal((await newAddress(a, powToken(solutionOf(c)))).status, 200);
    const key = `${prefix}pow:${c.challenge}`;
    assert.equal(await redis.get(key), '1');
    const ttl = await redis.pttl(key);
    const expiresAt = Number(/expires=(\d+)/.exec(c.salt)?.[1]) * 1000;
    // POW_CHALLENGE_TTL (5 min) plus the 60 s clock-skew margin.
    const expected = expiresAt + 60_000 - Date.now();
    assert.ok(Math.abs(ttl - expected) < 3000, `PTTL ${ttl} ms, expected about ${expected} ms`);
  });
});

describe('CHALLENGE=pow while Redis is unreachable', { skip: !ready && 'Redis is not available' }, () => {
  const prefix = `powtest:${process.pid}:${randomBytes(4).toString('hex')}:`;
  let proxy: TcpProxy;
  let node: TestServer;
  before(async () => {
    const target = new URL(REDIS_URL);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 6379) });
    node = await startTestServer({ CHALLENGE: 'pow', REDIS_URL: proxy.via(REDIS_URL), REDIS_KEY_PREFIX: prefix });
  });
  after(async () => {
    await node?.close();
    await proxy?.close();
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
    await redis.quit();
  });

  it('no 5xx: the node remembers spent challenges itself, and shares them again once Redis is back', async () => {
    const spentBefore = await solvedToken(node.httpUrl);
    assert.equal((await newAddress(node, spentBefore)).status, 200);
    await proxy.cut();
    const token = await solvedToken(node.httpUrl);
    const created = await newAddress(node, token);
    assert.equal(created.status, 200, created.text);
    const replay = await newAddress(node, token);
    assert.equal(replay.status, 400, replay.text);
    assert.match(replay.text, /already used/);
    await proxy.restore();
    // ioredis reconnects by itself; then spent challenges reach Redis again.
    const redis = new Redis(REDIS_URL);
    try {
      const deadline = Date.now() + 15_000;
      for (;;) {
        const c = await fetchChallenge(node.httpUrl);
        assert.equal((await newAddress(node, powToken(solutionOf(c)))).status, 200);
        if ((await redis.get(`${prefix}pow:${c.challenge}`)) === '1') break;
        assert.ok(Date.now() < deadline, 'the node did not use Redis again within 15 s');
        await new Promise((r) => setTimeout(r, 250));
      }
      // What was spent while Redis was away stays spent on this node, and so does what was spent before.
      assert.equal((await newAddress(node, token)).status, 400);
      assert.equal((await newAddress(node, spentBefore)).status, 400);
    } finally {
      await redis.quit();
    }
  });
});
