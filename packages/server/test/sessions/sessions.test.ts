// Browser sessions over real HTTP (docs/api.md "Authentication", "States"; docs/decisions.md
// "Cookies", "Sessions"): cookie attributes, jwt-cookie auth, the 3-address
// session, switch/rotate, forged cookies, fixation, logout, restart, delete.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CookieJar, createAddress, request, startTestServer, testClock, tmp, type HttpResult, type TestServer } from '../helpers/harness.js';

interface ParsedCookie {
  name: string;
  value: string;
  attrs: Map<string, string | true>;
}

function parseSetCookie(sc: string): ParsedCookie {
  const [pair, ...rest] = sc.split(';');
  const eq = pair!.indexOf('=');
  const attrs = new Map<string, string | true>();
  for (const a of rest) {
    const i = a.indexOf('=');
    if (i === -1) attrs.set(a.trim().toLowerCase(), true);
    else attrs.set(a.slice(0, i).trim().toLowerCase(), a.slice(i + 1).trim());
  }
  return { name: pair!.slice(0, eq).trim(), value: pair!.slice(eq + 1).trim(), attrs };
}

function cookieOf(res: HttpResult, name: string): ParsedCookie {
  const found = res.setCookies.map(parseSetCookie).filter((c) => c.name === name);
  assert.equal(found.length, 1, `exactly one Set-Cookie for ${name}; got ${JSON.stringify(res.setCookies)}`);
  return found[0]!;
}

/** The session id inside a session_id cookie value (`<id>.<sig>`, URL-encoded). */
function sessionIdIn(cookieValue: string): { id: string; sig: string } {
  const decoded = decodeURIComponent(cookieValue);
  const dot = decoded.lastIndexOf('.');
  assert.ok(dot > 0, `session_id is <id>.<sig>: ${decoded}`);
  return { id: decoded.slice(0, dot), sig: decoded.slice(dot + 1) };
}

const newAddress = (server: TestServer, jar?: CookieJar, body: Record<string, unknown> = {}, headers?: Record<string, string>) =>
  request(server.httpUrl, '/api/new_address', { method: 'POST', body, jar, headers });

const listing = (server: TestServer, jar: CookieJar) => request(server.httpUrl, '/api/session/addresses', { jar });

const withCookie = (server: TestServer, path: string, cookie: string, opts: { method?: string; body?: unknown } = {}) =>
  request(server.httpUrl, path, { ...opts, headers: { cookie } });

function assertPlainText(res: HttpResult) {
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
  assert.equal(res.json, undefined, `plain text, not JSON: ${res.text}`);
}

describe('sessions: cookies', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.close());

  it('new_address sets the jwt and session_id cookies with the documented attributes, without Secure over http', async () => {
    const res = await newAddress(server);
    assert.equal(res.status, 200);
    const jwt = cookieOf(res, 'jwt');
    assert.equal(jwt.value, res.json.jwt, 'jwt cookie carries the returned JWT');
    assert.equal(jwt.attrs.get('httponly'), true);
    assert.equal(String(jwt.attrs.get('samesite')).toLowerCase(), 'lax');
    assert.equal(jwt.attrs.get('path'), '/');
    assert.equal(jwt.attrs.get('max-age'), '604800');
    assert.equal(jwt.attrs.has('secure'), false);

    const sid = cookieOf(res, 'session_id');
    assert.equal(sid.attrs.get('httponly'), true);
    assert.equal(String(sid.attrs.get('samesite')).toLowerCase(), 'lax');
    assert.equal(sid.attrs.get('path'), '/');
    assert.equal(sid.attrs.get('max-age'), '2592000');
    assert.equal(sid.attrs.has('secure'), false);
    // URL-encoded: nothing that would need encoding is left raw.
    assert.match(sid.value, /^[A-Za-z0-9%._~-]+$/);
    const { id, sig } = sessionIdIn(sid.value);
    assert.match(id, /^[A-Za-z0-9_-]{16,}$/, 'a random id');
    assert.ok(sig.length >= 16, 'an HMAC signature');
    assert.equal(sid.value, encodeURIComponent(`${id}.${sig}`));
  });

  it('the X-Forwarded-Proto header is ignored without TRUST_PROXY', async () => {
    const res = await newAddress(server, undefined, {}, { 'x-forwarded-proto': 'https' });
    assert.equal(res.status, 200);
    assert.equal(cookieOf(res, 'jwt').attrs.has('secure'), false);
    assert.equal(cookieOf(res, 'session_id').attrs.has('secure'), false);
  });

  it('with TRUST_PROXY=1 and X-Forwarded-Proto: https both cookies are Secure', async () => {
    const proxied = await startTestServer({ TRUST_PROXY: '1' });
    try {
      const res = await newAddress(proxied, undefined, {}, { 'x-forwarded-proto': 'https' });
      assert.equal(res.status, 200);
      assert.equal(cookieOf(res, 'jwt').attrs.get('secure'), true);
      assert.equal(cookieOf(res, 'session_id').attrs.get('secure'), true);
      // The same server over plain http (no forwarding header) does not mark them Secure.
      const plain = await newAddress(proxied);
      assert.equal(cookieOf(plain, 'jwt').attrs.has('secure'), false);
      assert.equal(cookieOf(plain, 'session_id').attrs.has('secure'), false);
    } finally {
      await proxied.close();
    }
  });

  it('same-origin mail calls work with the jwt cookie alone', async () => {
    const created = await newAddress(server);
    const jar = new CookieJar();
    jar.cookies.set('jwt', cookieOf(created, 'jwt').value);
    const settings = await request(server.httpUrl, '/api/settings', { jar });
    assert.equal(settings.status, 200, settings.text);
    assert.deepEqual(settings.json, { address: created.json.address });
    const mails = await request(server.httpUrl, '/api/mails?limit=10&offset=0', { jar });
    assert.equal(mails.status, 200, mails.text);
    assert.equal(mails.json.count, 0);
    assert.deepEqual(mails.json.results, []);
    // Without any cookie or header: 401.
    const none = await request(server.httpUrl, '/api/settings');
    assert.equal(none.status, 401);
    assertPlainText(none);
  });
});

describe('sessions: listing and the 3-address cap', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.close());

  it('lists addresses with their createdAt in integer milliseconds (the service clock when each was made) and the newest as activeAddress; the session lives 30 days from its last renewal, to the millisecond', async () => {
    // A server of its own on a clock the test moves.
    const clock = testClock(Date.UTC(2026, 2, 1, 9, 30, 0, 123));
    const own = await startTestServer({ ADDRESS_TTL: '60d' }, undefined, undefined, { now: clock.now });
    try {
      const jar = new CookieJar();
      const t0 = clock.now();
      const a = await createAddress(own, {}, jar);
      clock.advance(1234);
      const b = await createAddress(own, {}, jar);
      const res = await listing(own, jar);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.json, {
        addresses: [
          { address: a.address, createdAt: t0 },
          { address: b.address, createdAt: t0 + 1234 },
        ],
        activeAddress: b.address,
      });
      // Adding b renewed the session: 30 days from then it is still there, one millisecond later it is gone.
      clock.set(t0 + 1234 + 30 * 24 * 3600 * 1000);
      assert.equal((await listing(own, jar)).status, 200, 'alive at exactly 30 days');
      clock.advance(1);
      const gone = await listing(own, jar);
      assert.equal(gone.status, 401, gone.text);
      assertPlainText(gone);
    } finally {
      await own.close();
    }
  });

  it('a fourth address drops the oldest from the session; the dropped JWT still works', async () => {
    const jar = new CookieJar();
    const created = [];
    for (let i = 0; i < 4; i++) created.push(await createAddress(server, {}, jar));
    const res = await listing(server, jar);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(
      res.json.addresses.map((e: { address: string }) => e.address),
      created.slice(1).map((c) => c.address),
    );
    assert.equal(res.json.activeAddress, created[3]!.address);
    const dropped = await request(server.httpUrl, '/api/settings', { jwt: created[0]!.jwt });
    assert.equal(dropped.status, 200, dropped.text);
    assert.deepEqual(dropped.json, { address: created[0]!.address });
    // Switching to the dropped address is refused: it is no longer in the session.
    const sw = await request(server.httpUrl, '/api/switch_address', { method: 'POST', body: { address: created[0]!.address }, jar });
    assert.equal(sw.status, 403);
  });

  it('separate jars have separate sessions', async () => {
    const jarA = new CookieJar();
    const jarB = new CookieJar();
    const a = await createAddress(server, {}, jarA);
    const b = await createAddress(server, {}, jarB);
    assert.deepEqual((await listing(server, jarA)).json.addresses.map((e: { address: string }) => e.address), [a.address]);
    assert.deepEqual((await listing(server, jarB)).json.addresses.map((e: { address: string }) => e.address), [b.address]);
    const sw = await request(server.httpUrl, '/api/switch_address', { method: 'POST', body: { address: b.address }, jar: jarA });
    assert.equal(sw.status, 403, 'another session\'s address is not switchable');
  });

  it('deleting an address removes it from the session listing', async () => {
    const jar = new CookieJar();
    const a = await createAddress(server, {}, jar);
    const b = await createAddress(server, {}, jar);
    const c = await createAddress(server, {}, jar);
    const del = await request(server.httpUrl, '/api/delete_address', { method: 'DELETE', jwt: b.jwt });
    assert.equal(del.status, 200, del.text);
    const res = await listing(server, jar);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(
      res.json.addresses.map((e: { address: string }) => e.address),
      [a.address, c.address],
    );
    assert.equal(res.json.activeAddress, c.address);
    // Deleting the active address leaves a listing that does not name it.
    const delActive = await request(server.httpUrl, '/api/delete_address', { method: 'DELETE', jwt: c.jwt });
    assert.equal(delActive.status, 200);
    const after = await listing(server, jar);
    assert.equal(after.status, 200, after.text);
    assert.deepEqual(after.json.addresses.map((e: { address: string }) => e.address), [a.address]);
    assert.notEqual(after.json.activeAddress, c.address);
    const sw = await request(server.httpUrl, '/api/switch_address', { method: 'POST', body: { address: b.address }, jar });
    assert.equal(sw.status, 403, 'a deleted address cannot be switched to');
  });

  it('deleting the address the jwt cookie names moves the cookie to the session\'s active address, and clears it when none is left', async () => {
    const jar = new CookieJar();
    const a = await createAddress(server, {}, jar);
    const b = await createAddress(server, {}, jar);
    const c = await createAddress(server, {}, jar);
    // Bearer for another address than the cookie's: the cookie is not touched.
    const other = await request(server.httpUrl, '/api/delete_address', { method: 'DELETE', jwt: a.jwt, jar });
    assert.equal(other.status, 200, other.text);
    assert.deepEqual(other.setCookies, []);
    assert.equal((await request(server.httpUrl, '/api/settings', { jar })).json.address, c.address);
    // The cookie's own address, deleted with the cookie: it now names the session's active address.
    const sessionBefore = jar.cookies.get('session_id');
    const del = await request(server.httpUrl, '/api/delete_address', { method: 'DELETE', jar });
    assert.equal(del.status, 200, del.text);
    const listed = await listing(server, jar);
    assert.equal(listed.status, 200, listed.text);
    assert.equal(listed.json.activeAddress, b.address);
    assert.notEqual(jar.cookies.get('session_id'), sessionBefore, 'session_id rotated, as a switch rotates it');
    const settings = await request(server.httpUrl, '/api/settings', { jar });
    assert.equal(settings.status, 200, settings.text);
    assert.equal(settings.json.address, b.address);
    assert.equal((await request(server.httpUrl, '/api/mails?limit=10&offset=0', { jar })).status, 200);
    // The last one: nothing left to move to; the cookie is cleared, the session stays (empty).
    const last = await request(server.httpUrl, '/api/delete_address', { method: 'DELETE', jar });
    assert.equal(last.status, 200, last.text);
    const cleared = cookieOf(last, 'jwt');
    assert.equal(cleared.value, '');
    assert.equal(jar.cookies.get('jwt'), undefined);
    assert.equal((await listing(server, jar)).json.activeAddress, '');
  });
});

describe('sessions: switch_address', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.close());

  it('switches to an address in the session, sets its jwt cookie and rotates session_id', async () => {
    const jar = new CookieJar();
    const a = await createAddress(server, {}, jar);
    const b = await createAddress(server, {}, jar);
    const oldSid = jar.cookies.get('session_id')!;
    assert.equal((await request(server.httpUrl, '/api/settings', { jar })).json.address, b.address);

    const res = await request(server.httpUrl, '/api/switch_address', { method: 'POST', body: { address: a.address }, jar });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json, { success: true, address: a.address });
    const jwtCookie = cookieOf(res, 'jwt');
    assert.equal(jwtCookie.attrs.get('max-age'), '604800');
    assert.equal(jwtCookie.attrs.get('httponly'), true);
    const sidCookie = cookieOf(res, 'session_id');
    assert.equal(sidCookie.attrs.get('max-age'), '2592000');
    assert.equal(sidCookie.attrs.get('httponly'), true);
    const newSid = jar.cookies.get('session_id')!;
    assert.notEqual(newSid, oldSid, 'session_id rotated');
    assert.notEqual(sessionIdIn(newSid).id, sessionIdIn(oldSid).id, 'a new id, not only a new signature');

    // The jwt cookie now authenticates as the chosen address.
    const settings = await request(server.httpUrl, '/api/settings', { jar });
    assert.equal(settings.status, 200);
    assert.deepEqual(settings.json, { address: a.address });
    const viaJwtCookie = await request(server.httpUrl, '/api/settings', { headers: { cookie: `jwt=${jwtCookie.value}` } });
    assert.deepEqual(viaJwtCookie.json, { address: a.address });

    // The old session id is dead; the new one works and shows the switch.
    const stale = await withCookie(server, '/api/session/addresses', `session_id=${oldSid}`);
    assert.equal(stale.status, 401);
    assertPlainText(stale);
    const staleSwitch = await withCookie(server, '/api/switch_address', `session_id=${oldSid}`, { method: 'POST', body: { address: b.address } });
    assert.equal(staleSwitch.status, 401);
    const fresh = await listing(server, jar);
    assert.equal(fresh.status, 200, fresh.text);
    assert.equal(fresh.json.activeAddress, a.address);
    assert.deepEqual(
      fresh.json.addresses.map((e: { address: string }) => e.address),
      [a.address, b.address],
    );
  });

  it('matches the address case-insensitively', async () => {
    const jar = new CookieJar();
    const a = await createAddress(server, {}, jar);
    await createAddress(server, {}, jar);
    const res = await request(server.httpUrl, '/api/switch_address', { method: 'POST', body: { address: a.address.toUpperCase() }, jar });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json, { success: true, address: a.address });
  });

  it('an address not in the session is 403 and changes nothing', async () => {
    const jar = new CookieJar();
    await createAddress(server, {}, jar);
    const other = await createAddress(server, {});
    const sid = jar.cookies.get('session_id');
    const res = await request(server.httpUrl, '/api/switch_address', { method: 'POST', body: { address: other.address }, jar });
    assert.equal(res.status, 403);
    assertPlainText(res);
    assert.deepEqual(res.setCookies, [], 'no cookie changes on refusal');
    assert.equal(jar.cookies.get('session_id'), sid);
    assert.equal((await listing(server, jar)).status, 200, 'the session survives a refused switch');
    const unknown = await request(server.httpUrl, '/api/switch_address', { method: 'POST', body: { address: 'nobody@nowhere.example' }, jar });
    assert.equal(unknown.status, 403);
  });

  it('a missing or invalid body is 400', async () => {
    const jar = new CookieJar();
    await createAddress(server, {}, jar);
    const cases: { body?: unknown; headers?: Record<string, string> }[] = [
      {},
      { body: {} },
      { body: { addr: 'x@y' } },
      { body: { address: { nested: true } } },
      { body: 'not json', headers: { 'content-type': 'application/json' } },
      { body: 'null' },
      { body: { address: 'x'.repeat(400) } },
    ];
    for (const c of cases) {
      const res = await request(server.httpUrl, '/api/switch_address', { method: 'POST', jar, ...c });
      assert.equal(res.status, 400, `${JSON.stringify(c)} -> ${res.status} ${res.text}`);
      assertPlainText(res);
    }
  });

  it('no cookie is 401', async () => {
    const { address } = await createAddress(server, {});
    const res = await request(server.httpUrl, '/api/switch_address', { method: 'POST', body: { address } });
    assert.equal(res.status, 401);
    assertPlainText(res);
    // A jwt cookie or Bearer token is not a session.
    const jar = new CookieJar();
    const mine = await createAddress(server, {}, jar);
    const jwtOnly = await withCookie(server, '/api/switch_address', `jwt=${jar.cookies.get('jwt')}`, { method: 'POST', body: { address: mine.address } });
    assert.equal(jwtOnly.status, 401);
    const bearer = await request(server.httpUrl, '/api/switch_address', { method: 'POST', body: { address: mine.address }, jwt: mine.jwt });
    assert.equal(bearer.status, 401);
    assert.equal((await request(server.httpUrl, '/api/session/addresses')).status, 401);
  });

  it('forged session cookies are 401', async () => {
    const jar = new CookieJar();
    const { address } = await createAddress(server, {}, jar);
    const { id, sig } = sessionIdIn(jar.cookies.get('session_id')!);
    const flipped = sig[0] === 'A' ? `B${sig.slice(1)}` : `A${sig.slice(1)}`;
    const madeUpId = 'x'.repeat(id.length);
    const forgeries = {
      'bad signature': encodeURIComponent(`${id}.${flipped}`),
      'truncated signature': encodeURIComponent(`${id}.${sig.slice(0, -2)}`),
      'made-up id with a copied signature': encodeURIComponent(`${madeUpId}.${sig}`),
      'made-up id signed wrong': encodeURIComponent(`${madeUpId}.${'A'.repeat(sig.length)}`),
      'unsigned raw id': encodeURIComponent(id),
      'raw id with trailing dot': encodeURIComponent(`${id}.`),
      garbage: 'garbage',
      empty: '',
    };
    for (const [what, value] of Object.entries(forgeries)) {
      const cookie = `session_id=${value}`;
      const list = await withCookie(server, '/api/session/addresses', cookie);
      assert.equal(list.status, 401, `${what}: listing -> ${list.status}`);
      const sw = await withCookie(server, '/api/switch_address', cookie, { method: 'POST', body: { address } });
      assert.equal(sw.status, 401, `${what}: switch -> ${sw.status}`);
      const out = await withCookie(server, '/api/logout', cookie, { method: 'POST' });
      assert.equal(out.status, 401, `${what}: logout -> ${out.status}`);
    }
    // None of the attempts harmed the real session.
    assert.equal((await listing(server, jar)).status, 200);
  });
});

describe('sessions: fixation, logout, restart', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.close());

  it('a client-chosen session_id is never adopted', async () => {
    for (const chosen of ['attacker-chosen-id', encodeURIComponent('attacker-chosen-id.c2lnbmF0dXJl'), 'x'.repeat(32)]) {
      const res = await withCookie(server, '/api/new_address', `session_id=${chosen}`, { method: 'POST', body: {} });
      assert.equal(res.status, 200, res.text);
      const minted = cookieOf(res, 'session_id').value;
      assert.notEqual(minted, chosen);
      const { id } = sessionIdIn(minted);
      assert.ok(!decodeURIComponent(chosen).startsWith(id), 'the minted id is not derived from the chosen one');
      // The minted one works; the chosen one still does not.
      const ok = await withCookie(server, '/api/session/addresses', `session_id=${minted}`);
      assert.equal(ok.status, 200);
      assert.deepEqual(ok.json.addresses.map((e: { address: string }) => e.address), [res.json.address]);
      assert.equal((await withCookie(server, '/api/session/addresses', `session_id=${chosen}`)).status, 401);
    }
  });

  it('new_address with a dead (logged-out) session cookie starts a fresh session', async () => {
    const jar = new CookieJar();
    await createAddress(server, {}, jar);
    const dead = jar.cookies.get('session_id')!;
    assert.equal((await request(server.httpUrl, '/api/logout', { method: 'POST', jar })).status, 200);
    const res = await withCookie(server, '/api/new_address', `session_id=${dead}`, { method: 'POST', body: {} });
    assert.equal(res.status, 200);
    const minted = cookieOf(res, 'session_id').value;
    assert.notEqual(minted, dead);
    const list = await withCookie(server, '/api/session/addresses', `session_id=${minted}`);
    assert.deepEqual(list.json.addresses.map((e: { address: string }) => e.address), [res.json.address]);
  });

  it('logout clears both cookies and kills the session server-side', async () => {
    const jar = new CookieJar();
    const a = await createAddress(server, {}, jar);
    const sid = jar.cookies.get('session_id')!;
    const res = await request(server.httpUrl, '/api/logout', { method: 'POST', jar });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json, { success: true });
    for (const name of ['jwt', 'session_id']) {
      const c = cookieOf(res, name);
      const maxAge = c.attrs.get('max-age');
      const expires = c.attrs.get('expires');
      const cleared = maxAge === '0' || (typeof expires === 'string' && Date.parse(expires) <= Date.now());
      assert.ok(cleared, `${name} cleared: ${JSON.stringify(res.setCookies)}`);
      assert.equal(c.attrs.get('path'), '/', `${name} cleared on the path it was set on`);
    }
    assert.equal(jar.cookies.size, 0, 'the jar dropped both cookies');
    const stale = await withCookie(server, '/api/session/addresses', `session_id=${sid}`);
    assert.equal(stale.status, 401);
    const again = await withCookie(server, '/api/logout', `session_id=${sid}`, { method: 'POST' });
    assert.equal(again.status, 401, 'a second logout with the old cookie is 401');
    // The address and its JWT live on.
    const settings = await request(server.httpUrl, '/api/settings', { jwt: a.jwt });
    assert.equal(settings.status, 200);
  });

  it('logout without a cookie is 401', async () => {
    const res = await request(server.httpUrl, '/api/logout', { method: 'POST' });
    assert.equal(res.status, 401);
    assertPlainText(res);
    assert.deepEqual(res.setCookies, []);
  });

  it('sessions survive a restart on the same data directory', async () => {
    const dir = tmp('temp-inbox-sessions-');
    const jar = new CookieJar();
    let first: TestServer | undefined = await startTestServer({}, dir);
    let second: TestServer | undefined;
    try {
      const a = await createAddress(first, {}, jar);
      const b = await createAddress(first, {}, jar);
      await first.close({ keepData: true });
      first = undefined;
      second = await startTestServer({}, dir);
      const res = await listing(second, jar);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.json.addresses.map((e: { address: string }) => e.address), [a.address, b.address]);
      assert.equal(res.json.activeAddress, b.address);
      const settings = await request(second.httpUrl, '/api/settings', { jar });
      assert.deepEqual(settings.json, { address: b.address }, 'the jwt cookie also survives (same secret)');
      const sw = await request(second.httpUrl, '/api/switch_address', { method: 'POST', body: { address: a.address }, jar });
      assert.equal(sw.status, 200, sw.text);
    } finally {
      await first?.close();
      await second?.close();
      const { rmSync } = await import('node:fs');
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
