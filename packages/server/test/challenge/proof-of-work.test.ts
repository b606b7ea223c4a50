// CHALLENGE=pow (docs/decisions.md "Bot challenge"; docs/api.md GET /api/challenge):
// POST /api/new_address asks for a solved ALTCHA proof of work in cf_token. Each
// challenge is signed, expires and creates one address; anything malformed is a
// plain-text 400, never a 5xx. Several nodes on one Redis share the record of spent
// challenges: see proof-of-work-nodes.test.ts.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { pino } from 'pino';
import type { PowChallenge } from '@temp-inbox/api';
import { ConfigError, loadConfig } from '../../src/config/index.js';
import { createUsedChallenges } from '../../src/challenge/used-challenges.js';
import { AppError } from '../../src/domain/errors.js';
import { request, startTestServer, type HttpResult, type TestServer } from '../helpers/harness.js';
import { fetchChallenge, powToken, solutionOf, solve, solvedToken } from '../helpers/pow.js';

const newAddress = (server: TestServer, body: unknown) => request(server.httpUrl, '/api/new_address', { method: 'POST', body });

function assertPlainTextError(res: HttpResult, status: number, text?: RegExp) {
  assert.equal(res.status, status, `${res.status} ${res.text}`);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
  assert.equal(res.json, undefined, `plain text, not JSON: ${res.text}`);
  assert.ok(res.text.length > 0, 'a human sentence');
  if (text) assert.match(res.text, text);
  assert.deepEqual(res.setCookies, [], 'no cookies on a refused creation');
}

/** The test's clock: the server's now() is the real time plus `shift` milliseconds. */
const clock = { shift: 0, now: () => Date.now() + clock.shift };

describe('CHALLENGE=pow', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ CHALLENGE: 'pow', SESSION_SECRET: randomBytes(32).toString('hex') }, undefined, undefined, { now: clock.now });
  });
  after(async () => {
    await server?.close();
  });

  it('GET /api/challenge issues signed, expiring ALTCHA challenges of POW_MAX_NUMBER, never cached', async () => {
    const t0 = clock.now();
    const res = await request(server.httpUrl, '/api/challenge');
    const t1 = clock.now();
    assert.equal(res.status, 200, res.text);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    const c = res.json as PowChallenge;
    assert.deepEqual(Object.keys(c).sort(), ['algorithm', 'challenge', 'maxnumber', 'salt', 'signature']);
    assert.equal(c.algorithm, 'SHA-256');
    assert.equal(c.maxnumber, 50_000, 'the default POW_MAX_NUMBER');
    assert.match(c.challenge, /^[0-9a-f]{64}$/);
    assert.match(c.signature, /^[0-9a-f]{64}$/);
    const expires = Number(/[?&]expires=(\d+)&/.exec(c.salt)?.[1]);
    // In whole seconds (rounded down) of a moment between the request and its answer.
    assert.ok(expires * 1000 > t0 + 5 * 60_000 - 1000 && expires * 1000 <= t1 + 5 * 60_000, `expires in POW_CHALLENGE_TTL (5 min): ${c.salt}`);
    const number = solve(c);
    assert.ok(number >= 0 && number <= c.maxnumber);
    assert.equal(createHash('sha256').update(c.salt + number).digest('hex'), c.challenge);
    const other = await fetchChallenge(server.httpUrl);
    assert.notEqual(other.salt, c.salt);
    assert.notEqual(other.challenge, c.challenge);
  });

  it('a solved challenge creates one address; the same solution again is 400 and creates nothing', async () => {
    const token = await solvedToken(server.httpUrl);
    const first = await newAddress(server, { name: 'pow-once', cf_token: token });
    assert.equal(first.status, 200, first.text);
    assert.match(first.json.address, /^pow-once@/);
    assert.ok(first.setCookies.some((c) => c.startsWith('jwt=')));
    assertPlainTextError(await newAddress(server, { name: 'pow-twice', cf_token: token }), 400, /already used/);
    // Concurrent replays: one at most gets through.
    const fresh = await solvedToken(server.httpUrl);
    const answers = await Promise.all(Array.from({ length: 5 }, () => newAddress(server, { cf_token: fresh })));
    assert.deepEqual(answers.map((r) => r.status).sort(), [200, 400, 400, 400, 400]);
    // The refused replay took no name.
    const ok = await newAddress(server, { name: 'pow-twice', cf_token: await solvedToken(server.httpUrl) });
    assert.equal(ok.status, 200, ok.text);
  });

  it('without a cf_token: 400 that points at GET /api/challenge', async () => {
    for (const body of [{}, { cf_token: '' }, { name: 'pow-missing' }]) assertPlainTextError(await newAddress(server, body), 400, /GET \/api\/challenge/);
    assertPlainTextError(await request(server.httpUrl, '/api/new_address', { method: 'POST' }), 400);
  });

  it('an expired challenge is refused; one seconds before its expiry is not', async () => {
    const late = solutionOf(await fetchChallenge(server.httpUrl));
    const inTime = solutionOf(await fetchChallenge(server.httpUrl));
    try {
      clock.shift = 5 * 60_000 - 10_000;
      assert.equal((await newAddress(server, { cf_token: powToken(inTime) })).status, 200);
      clock.shift = 5 * 60_000 + 1_000;
      assertPlainTextError(await newAddress(server, { cf_token: powToken(late) }), 400, /expired/);
      // A challenge issued now (on the moved clock) is good now.
      assert.equal((await newAddress(server, { cf_token: await solvedToken(server.httpUrl) })).status, 200);
    } finally {
      clock.shift = 0;
    }
  });

  it('a tampered signature, a wrong number, a moved expiry or another server’s challenge: 400', async () => {
    const c = await fetchChallenge(server.httpUrl);
    const good = solutionOf(c);
    const flip = (hex: string) => (hex[0] === '0' ? '1' : '0') + hex.slice(1);
    assertPlainTextError(await newAddress(server, { cf_token: powToken({ ...good, signature: flip(good.signature) }) }), 400, /not issued by this server/);
    assertPlainTextError(await newAddress(server, { cf_token: powToken({ ...good, number: good.number + 1 }) }), 400, /proof of work is wrong/);
    // A later expiry changes the hash the signature covers.
    const moved = c.salt.replace(/expires=(\d+)/, (_m, s: string) => `expires=${Number(s) + 3600}`);
    assertPlainTextError(await newAddress(server, { cf_token: powToken({ ...good, salt: moved }) }), 400, /wrong/);
    // Re-solved for the moved salt, the hash matches but the signature does not.
    const resolved = { ...good, salt: moved, challenge: createHash('sha256').update(moved + 7).digest('hex'), number: 7 };
    assertPlainTextError(await newAddress(server, { cf_token: powToken(resolved) }), 400, /not issued by this server/);
    const stranger = await startTestServer({ CHALLENGE: 'pow', SESSION_SECRET: randomBytes(32).toString('hex') });
    try {
      const foreign = await solvedToken(stranger.httpUrl);
      assertPlainTextError(await newAddress(server, { cf_token: foreign }), 400, /not issued by this server/);
    } finally {
      await stranger.close();
    }
    // None of that spent the challenge.
    assert.equal((await newAddress(server, { cf_token: powToken(good) })).status, 200);
  });

  it('malformed base64, JSON or fields: 400 plain text, never a 5xx', async () => {
    const good = solutionOf(await fetchChallenge(server.httpUrl));
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    const cases: [string, string, RegExp][] = [
      ['not base64', '%%%not base64%%%', /not base64/],
      ['spaces', 'eyJh IjoxfQ==', /not base64/],
      ['base64 of text', b64('hello, world'), /not base64-encoded JSON/],
      ['truncated JSON', b64(JSON.stringify(good).slice(0, 40)), /not base64-encoded JSON/],
      ['JSON null', b64('null'), /must hold/],
      ['JSON array', b64('[1,2,3]'), /must hold/],
      ['JSON number', b64('42'), /must hold/],
      ['empty object', b64('{}'), /must hold/],
      ['number as a string', powToken({ ...good, number: String(good.number) }), /must hold/],
      ['negative number', powToken({ ...good, number: -1 }), /must hold/],
      ['fractional number', powToken({ ...good, number: 1.5 }), /must hold/],
      ['huge number', b64(JSON.stringify(good).replace(/"number":\d+/, '"number":1e400')), /must hold/],
      ['another algorithm', powToken({ ...good, algorithm: 'SHA-1' }), /must hold/],
      ['unknown algorithm', powToken({ ...good, algorithm: 'MD5' }), /must hold/],
      ['salt not a string', powToken({ ...good, salt: { toString: 1 } }), /must hold/],
      ['signature missing', powToken({ ...good, signature: undefined }), /must hold/],
      ['prototype keys', b64(`{"__proto__":{"number":1},"constructor":1,${JSON.stringify({ ...good, number: good.number + 1 }).slice(1)}`), /wrong/],
      ['salt of 2 KB', powToken({ ...good, salt: 'a'.repeat(2048) }), /must hold/],
      ['over 4 KiB', 'A'.repeat(4100), /cf_token/],
    ];
    for (const [what, cf_token, text] of cases) {
      const res = await newAddress(server, { cf_token });
      assert.ok(res.status === 400, `${what}: ${res.status} ${res.text}`);
      assertPlainTextError(res, 400, text);
    }
    // cf_token of another type is the schema's 400.
    assertPlainTextError(await newAddress(server, { cf_token: 5 }), 400);
    // Still unspent.
    assert.equal((await newAddress(server, { cf_token: powToken(good) })).status, 200);
  });

  it('tells the UI to solve the proof of work; the page allows no third-party script', async () => {
    const res = await request(server.httpUrl, '/ui-config.json');
    assert.equal(res.json.challenge, 'pow');
    assert.equal(res.json.turnstileSiteKey, null);
  });

  it('describes GET /api/challenge in the OpenAPI document', async () => {
    const doc = (await request(server.httpUrl, '/openapi.json')).json;
    const op = doc.paths['/api/challenge'].get;
    assert.deepEqual(Object.keys(op.responses).sort(), ['200', '404', '429']);
    assert.deepEqual(Object.keys(op.responses['200'].content['application/json'].schema.properties).sort(), ['algorithm', 'challenge', 'maxnumber', 'salt', 'signature']);
  });
});

describe('CHALLENGE=pow: configuration and rate limit', () => {
  it('POW_MAX_NUMBER and POW_CHALLENGE_TTL set the difficulty and the lifetime', async () => {
    const server = await startTestServer({ CHALLENGE: 'pow', POW_MAX_NUMBER: '1000', POW_CHALLENGE_TTL: '30s' });
    try {
      const t0 = Date.now();
      const c = await fetchChallenge(server.httpUrl);
      const t1 = Date.now();
      assert.equal(c.maxnumber, 1000);
      const expires = Number(/expires=(\d+)/.exec(c.salt)?.[1]) * 1000;
      assert.ok(expires > t0 + 30_000 - 1000 && expires <= t1 + 30_000, c.salt);
      assert.equal((await newAddress(server, { cf_token: powToken(solutionOf(c)) })).status, 200);
    } finally {
      await server.close();
    }
  });

  it('GET /api/challenge is rate-limited per client (RATE_LIMIT_CHALLENGE): the limit passes, one past it is 429', async () => {
    const server = await startTestServer({ CHALLENGE: 'pow', RATE_LIMIT_CHALLENGE: '3/60' });
    try {
      for (let i = 1; i <= 3; i++) assert.equal((await request(server.httpUrl, '/api/challenge')).status, 200, `request ${i} of 3`);
      const past = await request(server.httpUrl, '/api/challenge');
      assert.equal(past.status, 429);
      assert.match(past.headers.get('content-type') ?? '', /^text\/plain/);
      assert.equal(past.headers.get('retry-after'), '60');
      // Per client: another address is still served, and creating addresses is not limited by it.
      assert.equal((await request(server.httpUrl, '/api/challenge', { localAddress: '127.0.0.2' })).status, 200);
      const token = await solvedToken(server.httpUrl, '127.0.0.3');
      assert.equal((await newAddress(server, { cf_token: token })).status, 200);
    } finally {
      await server.close();
    }
  });

  it('CHALLENGE=off needs nothing, and GET /api/challenge is a plain-text 404', async () => {
    const server = await startTestServer({ CHALLENGE: 'off', TURNSTILE_SECRET_KEY: 'set-but-off', TURNSTILE_SITE_KEY: 'site' });
    try {
      assert.equal((await newAddress(server, {})).status, 200);
      assert.equal((await request(server.httpUrl, '/api/new_address', { method: 'POST' })).status, 200);
      assert.equal((await newAddress(server, { cf_token: 'anything' })).status, 200, 'a stray token is ignored');
      const res = await request(server.httpUrl, '/api/challenge');
      assert.equal(res.status, 404);
      assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
      assert.match(res.text, /no proof of work/);
      const ui = (await request(server.httpUrl, '/ui-config.json')).json;
      assert.equal(ui.challenge, 'off');
      assert.equal(ui.turnstileSiteKey, null, 'no Turnstile widget when the challenge is off');
    } finally {
      await server.close();
    }
  });

  it('unset CHALLENGE keeps the old behaviour: turnstile exactly when TURNSTILE_SECRET_KEY is set', () => {
    assert.equal(loadConfig({}).challenge.mode, 'off');
    assert.equal(loadConfig({ TURNSTILE_SECRET_KEY: 'k' }).challenge.mode, 'turnstile');
    assert.equal(loadConfig({ TURNSTILE_SECRET_KEY: '' }).challenge.mode, 'off');
    assert.equal(loadConfig({ CHALLENGE: '', TURNSTILE_SECRET_KEY: 'k' }).challenge.mode, 'turnstile');
    assert.equal(loadConfig({ CHALLENGE: 'POW', TURNSTILE_SECRET_KEY: 'k' }).challenge.mode, 'pow');
    assert.equal(loadConfig({ CHALLENGE: 'off', TURNSTILE_SECRET_KEY: 'k' }).challenge.mode, 'off');
    const c = loadConfig({});
    assert.equal(c.challenge.powMaxNumber, 50_000);
    assert.equal(c.challenge.powChallengeTtlMs, 300_000);
    assert.deepEqual(c.limits.routes.CHALLENGE, { max: 20, windowSeconds: 60 });
  });

  it('refuses bad values with one line naming the variable', () => {
    const refused = (env: Record<string, string>, text: RegExp) =>
      assert.throws(
        () => loadConfig(env),
        (err: unknown) => err instanceof ConfigError && text.test(err.message) && !err.message.includes('\n'),
      );
    refused({ CHALLENGE: 'captcha' }, /^CHALLENGE is invalid: expected turnstile, pow, off\.$/);
    refused({ CHALLENGE: 'turnstile' }, /CHALLENGE=turnstile needs TURNSTILE_SECRET_KEY/);
    refused({ POW_MAX_NUMBER: '999' }, /^POW_MAX_NUMBER is invalid: expected a whole number from 1000 to 100000000\.$/);
    refused({ POW_MAX_NUMBER: '100000001' }, /^POW_MAX_NUMBER is invalid/);
    refused({ POW_MAX_NUMBER: '5e4' }, /^POW_MAX_NUMBER is invalid/);
    refused({ POW_CHALLENGE_TTL: '0' }, /^POW_CHALLENGE_TTL is invalid/);
  });
});

describe('spent challenges in memory', () => {
  const logger = pino({ level: 'silent' });

  it('are bounded: when full of unexpired challenges, the next is a 503 (fail closed) until some expire', async () => {
    let now = 1_000_000;
    const used = createUsedChallenges({ keyPrefix: 'x:', now: () => now, logger, maxEntries: 3 });
    assert.equal(await used.claim('a', now + 1000), true);
    assert.equal(await used.claim('a', now + 1000), false);
    assert.equal(await used.claim('b', now + 1000), true);
    assert.equal(await used.claim('c', now + 5000), true);
    await assert.rejects(used.claim('d', now + 1000), (err: unknown) => err instanceof AppError && err.code === 'unavailable' && err.retryAfterSeconds === 60);
    // Forgotten only a clock-skew margin (60 s) after their expiry.
    now += 1000 + 59_000;
    await assert.rejects(used.claim('d', now + 1000));
    now += 2000;
    assert.equal(await used.claim('d', now + 1000), true, 'a and b expired and were dropped');
    assert.equal(await used.claim('c', now + 1000), false, 'c is still remembered');
  });
});
