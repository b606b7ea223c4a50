// Every endpoint of the interface through real HTTP and real SMTP: the service on
// port 0, mail delivered by an SMTP conversation, read back through the API.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { decodeJwt, SignJWT } from 'jose';
import { createTombstones } from '../../src/domain/tombstones.js';
import { openSqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import {
  client,
  CookieJar,
  createAddress,
  DOMAIN,
  message,
  receivedBlock,
  sendMail,
  SmtpClient,
  startTestServer,
  testClock,
  type HttpResult,
  type TestServer,
} from '../helpers/harness.js';

/** Random bytes that never start like a program (MZ, ELF), which the attachment policy refuses at DATA. */
function attachmentBytes(n: number): Buffer {
  const bytes = randomBytes(n);
  bytes[0] = 0;
  return bytes;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const RFC3339_UTC_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
/** The Received: header the server prepends: one header, possibly folded (RFC 5322 §2.2.3). */
const RECEIVED_BLOCK = /^Received: from [^\r\n]*\r\n(?:[ \t][^\r\n]*\r\n)*$/;

/** Runs `[command, expectedCode]` steps; the reply text must carry the code. */

function assertPlainError(res: HttpResult, status: number): void {
  assert.equal(res.status, status, res.text);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
}

/** The jwt signing key as the server keeps it: `<dataDir>/secrets.json` key jwtSecret (docs/decisions.md "JWT"). */
function serverJwtKey(server: TestServer): Uint8Array {
  const { jwtSecret } = JSON.parse(readFileSync(join(server.dataDir, 'secrets.json'), 'utf8')) as { jwtSecret: string };
  return new TextEncoder().encode(jwtSecret);
}

/** Builds a multipart message; parts are [headers, body] with CRLF line breaks. */
function multipart(headers: Record<string, string>, boundary: string, parts: [Record<string, string>, string][]): string {
  const head = Object.entries({ 'MIME-Version': '1.0', ...headers, 'Content-Type': `multipart/mixed; boundary="${boundary}"` })
    .map(([k, v]) => `${k}: ${v}`)
    .join('\r\n');
  const body = parts
    .map(([h, b]) => `--${boundary}\r\n${Object.entries(h).map(([k, v]) => `${k}: ${v}`).join('\r\n')}\r\n\r\n${b}\r\n`)
    .join('');
  return `${head}\r\n\r\nThis is a multi-part message in MIME format.\r\n${body}--${boundary}--\r\n`;
}

const base64Lines = (bytes: Buffer) => bytes.toString('base64').replace(/.{1,76}/g, '$&\r\n').trimEnd();
/** RFC 5987/2231 ext-value: only attr-chars stay literal. */
const rfc2231 = (s: string) => encodeURIComponent(s).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

describe('api: every endpoint through real HTTP and SMTP', () => {
  let server: TestServer;
  let api: ReturnType<typeof client>;
  // The service's clock stands still at a whole second (ages and expiries are exact); a test that moves it puts it back.
  const clock = testClock(Math.floor(Date.now() / 1000) * 1000);
  before(async () => {
    server = await startTestServer({}, undefined, undefined, { now: clock.now });
    api = client(server);
  });
  after(() => server.close());

  const list = (jwt: string, query = 'limit=100&offset=0') => api(`/api/mails?${query}`, { jwt });
  const deliver = (to: string | string[], msg: string | Buffer, from?: string) =>
    sendMail(server.smtpPort, { to: Array.isArray(to) ? to : [to], message: msg, ...(from !== undefined ? { from } : {}) });
  /** The newest mail of an inbox, as a full mail. */
  async function newest(jwt: string) {
    const page = await list(jwt, 'limit=1&offset=0');
    assert.equal(page.status, 200, page.text);
    const item = page.json.results[0];
    assert.ok(item, 'the inbox has a mail right after SMTP answered 250');
    const full = await api(`/api/mail/${item.uuid}`, { jwt });
    assert.equal(full.status, 200, full.text);
    return { item, full: full.json, meta: JSON.parse(item.metadata) };
  }

  describe('POST /api/new_address', () => {
    it('{} gives a random 10-character [a-z0-9] name at the default domain (docs/decisions.md "Names")', async () => {
      const seen = new Set<string>();
      for (let i = 0; i < 5; i++) {
        const { address, jwt } = await createAddress(server, {});
        assert.match(address, new RegExp(`^[a-z0-9]{10}@${DOMAIN.replace(/\./g, '\\.')}$`));
        assert.equal(typeof jwt, 'string');
        seen.add(address);
      }
      assert.equal(seen.size, 5, 'random names differ');
    });

    it('honours {name, domain}', async () => {
      const { address } = await createAddress(server, { name: 'alice', domain: DOMAIN });
      assert.equal(address, `alice@${DOMAIN}`);
    });

    it('lower-cases the requested name', async () => {
      const { address, jwt } = await createAddress(server, { name: 'Bob.Smith' });
      assert.equal(address, `bob.smith@${DOMAIN}`);
      assert.equal((await api('/api/settings', { jwt })).json.address, `bob.smith@${DOMAIN}`);
    });

    it('accepts names at the edges of the rule: 1 and 64 characters, inner . _ -', async () => {
      for (const name of ['x', 'a'.repeat(64), 'a.b_c-d', '0day']) {
        const res = await api('/api/new_address', { body: { name } });
        assert.equal(res.status, 200, `${name}: ${res.text}`);
        assert.equal(res.json.address, `${name}@${DOMAIN}`);
      }
    });

    it('refuses names outside [a-z0-9]([a-z0-9._-]{0,62}[a-z0-9])? or with ".." with 400', async () => {
      for (const name of ['.lead', 'trail-', 'a..b', 'a'.repeat(65), 'with space', ' pad', 'ünïcödé', 'δοκιμή', 'a@b', 'a+tag', '', '_x', 'x.']) {
        const res = await api('/api/new_address', { body: { name } });
        assertPlainError(res, 400);
        assert.ok(res.text.length > 0, 'a short human sentence');
      }
    });

    it('refuses blocklisted names with 400, whatever their case', async () => {
      for (const name of ['admin', 'postmaster', 'PostMaster', 'abuse', 'noreply']) assertPlainError(await api('/api/new_address', { body: { name } }), 400);
    });

    it('refuses a name taken by a live address with 409 and never hands out a second JWT', async () => {
      const first = await createAddress(server, { name: 'taken' });
      const again = await api('/api/new_address', { body: { name: 'taken' } });
      assertPlainError(again, 409);
      assertPlainError(await api('/api/new_address', { body: { name: 'TAKEN' } }), 409);
      assert.equal(again.setCookies.length, 0, 'no cookies for a refused name');
      assert.equal((await api('/api/settings', { jwt: first.jwt })).status, 200);
    });

    it('refuses a domain not in MAIL_DOMAINS with 400 and matches domains case-insensitively', async () => {
      assertPlainError(await api('/api/new_address', { body: { name: 'x1', domain: 'example.com' } }), 400);
      assertPlainError(await api('/api/new_address', { body: { domain: `sub.${DOMAIN}` } }), 400);
      const res = await api('/api/new_address', { body: { name: 'mixedcase', domain: DOMAIN.toUpperCase() } });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.json.address, `mixedcase@${DOMAIN}`);
    });

    it('works with no body at all, and with an empty JSON body', async () => {
      const none = await api('/api/new_address', { method: 'POST' });
      assert.equal(none.status, 200, none.text);
      assert.match(none.json.address, /^[a-z0-9]{10}@/);
      const empty = await api('/api/new_address', { method: 'POST', body: '{}' });
      assert.equal(empty.status, 200, empty.text);
    });

    it('sets the jwt and session_id cookies: HttpOnly, SameSite=Lax, Path=/, 7 and 30 days (docs/api.md "Authentication")', async () => {
      const res = await api('/api/new_address', { body: {} });
      assert.equal(res.status, 200);
      const jwtCookie = res.setCookies.find((c) => c.startsWith('jwt='));
      const sessionCookie = res.setCookies.find((c) => c.startsWith('session_id='));
      assert.ok(jwtCookie && sessionCookie, res.setCookies.join(' | '));
      assert.equal(jwtCookie.split(';')[0], `jwt=${res.json.jwt}`);
      for (const [cookie, maxAge] of [
        [jwtCookie, 7 * 24 * 3600],
        [sessionCookie, 30 * 24 * 3600],
      ] as const) {
        assert.match(cookie, /;\s*HttpOnly/i);
        assert.match(cookie, /;\s*SameSite=Lax/i);
        assert.match(cookie, /;\s*Path=\//i);
        assert.match(cookie, new RegExp(`;\\s*Max-Age=${maxAge}(;|$)`, 'i'));
      }
    });
  });

  it('every response carries a fresh x-request-id and X-Content-Type-Options: nosniff, errors included', async () => {
    const { jwt } = await createAddress(server);
    const responses = [
      [await api('/api/settings', { jwt }), 200],
      [await api('/api/settings'), 401],
      [await api('/api/no-such-route'), 404],
      [await api('/api/mails?limit=x&offset=0', { jwt }), 400],
      [await api('/api/new_address', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":' }), 400],
      [await api('/api/new_address', { method: 'POST', headers: { 'content-type': 'text/csv' }, body: 'a,b' }), 415],
      [await api('/openapi.json'), 200],
    ] as const;
    const ids = new Set<string>();
    for (const [res, status] of responses) {
      assert.equal(res.status, status, res.text);
      const id = res.headers.get('x-request-id') ?? '';
      assert.match(id, UUID_RE, `x-request-id on a ${status}`);
      ids.add(id);
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff', `nosniff on a ${status}`);
    }
    assert.equal(ids.size, responses.length, 'each request gets its own id');
  });

  describe('GET /api/settings and the Authorization header (docs/api.md "Authentication" rule 3)', () => {
    let jwt: string;
    let address: string;
    before(async () => ({ jwt, address } = await createAddress(server, { name: 'settings' })));

    it('returns the address bound to the JWT', async () => {
      const res = await api('/api/settings', { jwt });
      assert.equal(res.status, 200);
      assert.deepEqual(res.json, { address });
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    });

    it('401 without credentials and with a bad token', async () => {
      assertPlainError(await api('/api/settings'), 401);
      assertPlainError(await api('/api/settings', { jwt: 'not-a-jwt' }), 401);
      assertPlainError(await api('/api/settings', { jwt: 'aaa.bbb.ccc' }), 401);
    });

    it('401 for anything but exactly "Bearer <jwt>"', async () => {
      for (const value of [`bearer ${jwt}`, `BEARER ${jwt}`, `Bearer  ${jwt}`, `Bearer "${jwt}"`, `Bearer '${jwt}'`, `Token ${jwt}`, `Bearer`, `Bearer ${jwt} x`, `Bearer\t${jwt}`, jwt]) {
        assertPlainError(await api('/api/settings', { headers: { authorization: value } }), 401);
      }
    });

    it('a malformed header is 401 even when a valid jwt cookie is sent too', async () => {
      const res = await api('/api/settings', { headers: { authorization: `bearer ${jwt}`, cookie: `jwt=${jwt}` } });
      assertPlainError(res, 401);
    });

    it('without the header, the jwt cookie alone authenticates', async () => {
      const res = await api('/api/settings', { headers: { cookie: `jwt=${jwt}` } });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.json.address, address);
      const jar = new CookieJar();
      await api('/api/new_address', { body: { name: 'cookieonly' }, jar });
      const viaJar = await api('/api/mails?limit=1&offset=0', { jar });
      assert.equal(viaJar.status, 200, viaJar.text);
    });
  });

  describe('JWT isolation (docs/api.md "Authentication" rule 1)', () => {
    let a: { address: string; jwt: string };
    let b: { address: string; jwt: string };
    let bMail: string;
    let aSignedAt: number;
    before(async () => {
      aSignedAt = clock.now();
      a = await createAddress(server, { name: 'iso-a' });
      b = await createAddress(server, { name: 'iso-b' });
      const msg = multipart({ Subject: 'for b only' }, 'iso', [
        [{ 'Content-Type': 'text/plain' }, 'private'],
        [{ 'Content-Type': 'application/octet-stream', 'Content-Transfer-Encoding': 'base64', 'Content-Disposition': 'attachment; filename="b.bin"' }, base64Lines(attachmentBytes(64))],
      ]);
      await deliver(b.address, msg);
      bMail = (await list(b.jwt)).json.results[0].uuid;
    });

    it("A's JWT cannot list, read, delete or download B's mail: 404, and B still has it", async () => {
      assert.equal((await api(`/api/attachment/${bMail}/0`, { jwt: b.jwt })).status, 200, 'control: B can download');
      const aList = await list(a.jwt);
      assert.equal(aList.json.count, 0);
      assert.deepEqual(aList.json.results, []);
      assertPlainError(await api(`/api/mail/${bMail}`, { jwt: a.jwt }), 404);
      assertPlainError(await api(`/api/mails/${bMail}`, { method: 'DELETE', jwt: a.jwt }), 404);
      assertPlainError(await api(`/api/attachment/${bMail}/0`, { jwt: a.jwt }), 404);
      assert.equal((await api('/api/clear_inbox', { method: 'DELETE', jwt: a.jwt })).status, 200);
      assert.equal((await list(b.jwt)).json.count, 1, "A's actions leave B's inbox alone");
      assert.equal((await api(`/api/mail/${bMail}`, { jwt: b.jwt })).status, 200);
    });

    it('a tampered token is 401: changed signature, or a payload pointing at another address', async () => {
      const [h, p, s] = a.jwt.split('.') as [string, string, string];
      const flipped = s[5] === 'A' ? 'B' : 'A';
      assertPlainError(await api('/api/settings', { jwt: `${h}.${p}.${s.slice(0, 5)}${flipped}${s.slice(6)}` }), 401);
      const claimsB = decodeJwt(b.jwt);
      const forged = Buffer.from(JSON.stringify({ ...decodeJwt(a.jwt), sub: claimsB.sub, aid: claimsB['aid'] })).toString('base64url');
      assertPlainError(await api(`/api/mail/${bMail}`, { jwt: `${h}.${forged}.${s}` }), 401);
      const none = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
      assertPlainError(await api('/api/settings', { jwt: `${none}.${p}.${s}` }), 401);
    });

    it('a token signed with a different secret is 401; the same claims signed with the server secret work', async () => {
      const claims = decodeJwt(a.jwt);
      const sign = (key: Uint8Array) =>
        new SignJWT({ aid: claims['aid'] }).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setSubject(claims.sub!).setIssuedAt().setExpirationTime('1h').sign(key);
      assertPlainError(await api('/api/settings', { jwt: await sign(randomBytes(32)) }), 401);
      assert.equal((await api('/api/settings', { jwt: await sign(serverJwtKey(server)) })).status, 200, 'control: the server secret signs valid tokens');
    });

    it('on the service clock a token is good until the millisecond before its exp, and 401 from exp on, while its address lives', async () => {
      // Signed with the server's key, issued when the address was created (on the service clock) for the
      // 7-day lifetime; the JWT claims test below shows the server's own tokens are made the same way.
      const iat = Math.floor(aSignedAt / 1000);
      const exp = iat + 7 * 24 * 3600;
      const token = await new SignJWT({ aid: decodeJwt(a.jwt)['aid'] }).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setSubject(a.address).setIssuedAt(iat).setExpirationTime(exp).sign(serverJwtKey(server));
      const start = clock.now();
      try {
        clock.set(exp * 1000 - 1);
        for (const path of ['/api/settings', '/api/mails?limit=1&offset=0']) assert.equal((await api(path, { jwt: token })).status, 200, `${path} at exp - 1 ms`);
        clock.set(exp * 1000);
        for (const path of ['/api/settings', '/api/mails?limit=1&offset=0']) assertPlainError(await api(path, { jwt: token }), 401);
        // Not the address: at exactly ADDRESS_TTL (7 days) it is alive, and a token that has not run out still works.
        const later = await new SignJWT({ aid: decodeJwt(a.jwt)['aid'] }).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setSubject(a.address).setIssuedAt(exp - 60).setExpirationTime(exp + 60).sign(serverJwtKey(server));
        assert.equal((await api('/api/settings', { jwt: later })).status, 200, 'only the token ran out');
      } finally {
        clock.set(start);
      }
    });

    it('an expired token is 401 (7-day lifetime)', async () => {
      const claims = decodeJwt(a.jwt);
      const now = Math.floor(clock.now() / 1000);
      const expired = await new SignJWT({ aid: claims['aid'] })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setSubject(claims.sub!)
        .setIssuedAt(now - 8 * 24 * 3600)
        .setExpirationTime(now - 24 * 3600)
        .sign(serverJwtKey(server));
      for (const path of ['/api/settings', '/api/mails?limit=1&offset=0', `/api/mail/${bMail}`]) assertPlainError(await api(path, { jwt: expired }), 401);
    });

    it('JWT claims: HS256, sub = address, aid, iat, exp = iat + 7 days (docs/decisions.md "JWT")', () => {
      const header = JSON.parse(Buffer.from(a.jwt.split('.')[0]!, 'base64url').toString()) as { alg: string };
      assert.equal(header.alg, 'HS256');
      const claims = decodeJwt(a.jwt);
      assert.equal(claims.sub, a.address);
      assert.equal(typeof claims['aid'], 'number');
      assert.equal(claims.exp! - claims.iat!, 7 * 24 * 3600);
    });
  });

  describe('GET /api/mails', () => {
    let jwt: string;
    let address: string;
    const subjects = ['first', 'second', 'third'];
    before(async () => {
      ({ jwt, address } = await createAddress(server, { name: 'lister' }));
      for (const s of subjects) await deliver(address, message({ Subject: s, 'Message-ID': `<${s}@test>` }, `body ${s}`));
    });

    it('lists newest first, ties broken by id descending (docs/decisions.md "GET /api/mails")', async () => {
      const res = await list(jwt);
      assert.equal(res.status, 200);
      assert.equal(res.json.count, 3);
      const got = res.json.results.map((m: { metadata: string }) => JSON.parse(m.metadata).subject);
      assert.deepEqual(got, ['third', 'second', 'first']);
      const ids = res.json.results.map((m: { id: number }) => m.id);
      assert.deepEqual(ids, [...ids].sort((x, y) => y - x));
      const times = res.json.results.map((m: { created_at: string }) => Date.parse(m.created_at));
      assert.deepEqual(times, [...times].sort((x, y) => y - x));
    });

    it('pages with limit/offset; count is the total of live mails at every offset', async () => {
      const all = (await list(jwt)).json.results.map((m: { uuid: string }) => m.uuid);
      for (let offset = 0; offset <= 4; offset++) {
        const res = await list(jwt, `limit=1&offset=${offset}`);
        assert.equal(res.status, 200, res.text);
        assert.equal(res.json.count, 3, `count at offset ${offset}`);
        assert.deepEqual(
          res.json.results.map((m: { uuid: string }) => m.uuid),
          all.slice(offset, offset + 1),
        );
      }
      const two = await list(jwt, 'limit=2&offset=1');
      assert.deepEqual(two.json.results.map((m: { uuid: string }) => m.uuid), all.slice(1, 3));
      assert.equal(two.json.count, 3);
      const beyond = await list(jwt, 'limit=10&offset=50');
      assert.deepEqual(beyond.json, { results: [], count: 3 });
    });

    it('accepts limit=100, the documented maximum', async () => {
      const res = await list(jwt, 'limit=100&offset=0');
      assert.equal(res.status, 200);
      assert.equal(res.json.results.length, 3);
    });

    it('400 text/plain for a missing or out-of-range limit/offset', async () => {
      for (const q of ['offset=0', 'limit=10', '', 'limit=0&offset=0', 'limit=101&offset=0', 'limit=abc&offset=0', 'limit=10&offset=-1', 'limit=1.5&offset=0', 'limit=10&offset=0.5', 'limit=-1&offset=0', 'limit=1e1&offset=0', 'limit=0x10&offset=0', 'limit=Infinity&offset=0', 'limit=10&offset=Infinity']) {
        assertPlainError(await api(`/api/mails?${q}`, { jwt }), 400);
      }
    });

    it('401 before validation without credentials', async () => {
      assertPlainError(await api('/api/mails?limit=10&offset=0'), 401);
    });
  });

  describe('fields and types of a mail (docs/api.md: the list item and the full mail)', () => {
    let jwt: string;
    let address: string;
    const original = message(
      {
        From: '"Alice Example" <alice@example.org>',
        To: '"Field Test" <fields@temp-inbox.localhost>, other@example.net',
        Subject: 'Field test',
        Date: 'Tue, 1 Jul 2025 10:00:00 +0200',
        'Message-ID': '<field.test.1@example.org>',
      },
      'Hello there.\nYour code is 482913.\nVisit https://example.org/welcome now.\n',
    );
    let deliveredAt: number;
    /** The real clock when the 250 came: the uuid's time lies between deliveredAt and it. */
    let acknowledgedAt: number;
    before(async () => {
      ({ jwt, address } = await createAddress(server, { name: 'fields' }));
      // The uuid's time is read from the real clock, so the service clock is put at it first.
      clock.set(Date.now());
      deliveredAt = clock.now();
      await deliver(address, original, 'bounce+123@mailer.example.org');
      acknowledgedAt = Date.now();
    });

    it('list item: id integer, uuid, source = MAIL FROM, address, metadata JSON string, created_at RFC 3339 UTC, message_id', async () => {
      const res = await list(jwt);
      const item = res.json.results[0];
      assert.deepEqual(Object.keys(item).sort(), ['address', 'created_at', 'id', 'message_id', 'metadata', 'seen', 'source', 'uuid']);
      assert.equal(item.seen, false, 'a new mail is unread');
      assert.ok(Number.isSafeInteger(item.id) && item.id > 0);
      assert.match(item.uuid, UUID_RE);
      // Version 7 (RFC 9562): its first 48 bits are the delivery time in milliseconds.
      assert.equal(item.uuid[14], '7', 'a time-ordered uuid');
      const uuidTime = parseInt(item.uuid.replace(/-/g, '').slice(0, 12), 16);
      assert.ok(uuidTime >= deliveredAt && uuidTime <= acknowledgedAt, `its time is the delivery time (${uuidTime} within ${deliveredAt}..${acknowledgedAt})`);
      assert.equal(item.source, 'bounce+123@mailer.example.org', 'source is the envelope sender (docs/decisions.md "Raw")');
      assert.equal(item.address, address);
      assert.equal(typeof item.metadata, 'string');
      assert.match(item.created_at, RFC3339_UTC_MS);
      assert.equal(item.created_at, new Date(deliveredAt).toISOString(), 'the service clock when the mail was stored');
      assert.equal(item.message_id, '<field.test.1@example.org>');
    });

    it('metadata: subject, from, to, date, size, preview, has_html, attachments, codes, links', async () => {
      const { meta, full } = await newest(jwt);
      assert.equal(meta.subject, 'Field test');
      assert.deepEqual(meta.from, { name: 'Alice Example', address: 'alice@example.org' });
      assert.deepEqual(meta.to, [
        { name: 'Field Test', address: 'fields@temp-inbox.localhost' },
        { name: '', address: 'other@example.net' },
      ]);
      assert.equal(meta.date, '2025-07-01T08:00:00.000Z');
      // Counted from what was sent, not from what the server returns: the message and its Received: line.
      assert.equal(meta.size, Buffer.byteLength(original) + receivedBlock(full.raw).length, 'size: the bytes sent and the Received: line');
      assert.equal(meta.preview, 'Hello there. Your code is 482913. Visit https://example.org/welcome now.');
      assert.equal(meta.has_html, false);
      assert.deepEqual(meta.attachments, []);
      assert.deepEqual(meta.codes, ['482913']);
      assert.deepEqual(meta.links, ['https://example.org/welcome']);
    });

    it('full mail: the list item fields plus raw', async () => {
      const { item, full } = await newest(jwt);
      assert.deepEqual(Object.keys(full).sort(), ['address', 'created_at', 'id', 'message_id', 'metadata', 'raw', 'seen', 'source', 'uuid']);
      const { raw, ...rest } = full;
      assert.deepEqual(rest, item);
      assert.equal(typeof raw, 'string');
    });

    it('raw is the message byte for byte after one prepended Received: trace header, CRLF kept', async () => {
      const { full } = await newest(jwt);
      const raw: string = full.raw;
      assert.ok(raw.startsWith('Received: from '), raw.slice(0, 80));
      assert.ok(raw.endsWith(original), 'the bytes after the trace header are exactly the bytes sent');
      const trace = raw.slice(0, raw.length - original.length);
      assert.match(trace, RECEIVED_BLOCK);
      assert.match(trace, new RegExp(`for <${address}>`));
      assert.match(trace, /by mx\.test /);
      assert.equal(raw.replace(/\r\n/g, '').includes('\n'), false, 'no bare LF');
    });

    it('the null sender MAIL FROM:<> gives source = the From: address', async () => {
      const smtp = await SmtpClient.connect(server.smtpPort);
      await smtp.script([
        ['EHLO client.test', 250],
        ['MAIL FROM:<>', 250],
        [`RCPT TO:<${address}>`, 250],
        ['DATA', 354],
      ]);
      assert.equal((await smtp.data(message({ From: 'Bounce Daemon <mailer-daemon@example.org>', Subject: 'bounce' }, 'undeliverable'))).code, 250);
      await smtp.quit();
      const { item } = await newest(jwt);
      assert.equal(item.source, 'mailer-daemon@example.org');
      assert.equal(item.message_id, '', 'no Message-ID header: empty string');
    });

    it('dot-unstuffing: a line that starts with "." arrives with a single dot (RFC 5321 §4.5.2)', async () => {
      const smtp = await SmtpClient.connect(server.smtpPort);
      await smtp.script([
        ['EHLO client.test', 250],
        ['MAIL FROM:<dots@example.org>', 250],
        [`RCPT TO:<${address}>`, 250],
        ['DATA', 354],
      ]);
      // Written by hand so the stuffing is visible: "..x" on the wire is ".x" in the mail.
      smtp.write('Subject: dots\r\n\r\n..leading dot\r\n...two dots\r\nno dot\r\n.\r\n');
      assert.equal((await smtp.reply()).code, 250);
      await smtp.quit();
      const { full } = await newest(jwt);
      assert.ok(full.raw.endsWith('\r\nSubject: dots\r\n\r\n.leading dot\r\n..two dots\r\nno dot\r\n'), JSON.stringify(full.raw.slice(-80)));
    });
  });

  describe('DELETE /api/mails/{uuid} (soft delete)', () => {
    let jwt: string;
    let address: string;
    before(async () => ({ jwt, address } = await createAddress(server, { name: 'deleter' })));

    it('answers {success:true}; the mail is gone from reads and the count', async () => {
      await deliver(address, message({ Subject: 'keep' }, 'keep'));
      await deliver(address, message({ Subject: 'drop' }, 'drop'));
      const [drop, keep] = (await list(jwt)).json.results as { uuid: string }[];
      const res = await api(`/api/mails/${drop!.uuid}`, { method: 'DELETE', jwt });
      assert.equal(res.status, 200);
      assert.deepEqual(res.json, { success: true });
      assertPlainError(await api(`/api/mail/${drop!.uuid}`, { jwt }), 404);
      const after = await list(jwt);
      assert.equal(after.json.count, 1);
      assert.deepEqual(after.json.results.map((m: { uuid: string }) => m.uuid), [keep!.uuid]);
      assertPlainError(await api(`/api/mails/${drop!.uuid}`, { method: 'DELETE', jwt }), 404);
    });

    it('unknown or malformed uuid: 404', async () => {
      for (const uuid of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid', '1', "x'--"]) {
        assertPlainError(await api(`/api/mails/${encodeURIComponent(uuid)}`, { method: 'DELETE', jwt }), 404);
        assertPlainError(await api(`/api/mail/${encodeURIComponent(uuid)}`, { jwt }), 404);
      }
    });

    it('without credentials: 401, checked before the uuid (docs/decisions.md "Unknown uuid")', async () => {
      const uuid = (await list(jwt)).json.results[0].uuid;
      assertPlainError(await api(`/api/mails/${uuid}`, { method: 'DELETE' }), 401);
      assertPlainError(await api('/api/mails/not-a-uuid', { method: 'DELETE' }), 401);
      assertPlainError(await api('/api/mail/not-a-uuid'), 401);
      assert.equal((await api(`/api/mail/${uuid}`, { jwt })).status, 200, 'still there');
    });
  });

  describe('DELETE /api/clear_inbox', () => {
    it('answers {success:true}, empties the list, and later mail is listed', async () => {
      const { jwt, address } = await createAddress(server, { name: 'clearer' });
      for (let i = 0; i < 3; i++) await deliver(address, message({ Subject: `m${i}` }, 'x'));
      const old = (await list(jwt)).json.results[0].uuid;
      const res = await api('/api/clear_inbox', { method: 'DELETE', jwt });
      assert.equal(res.status, 200);
      assert.deepEqual(res.json, { success: true });
      assert.deepEqual((await list(jwt)).json, { results: [], count: 0 });
      assertPlainError(await api(`/api/mail/${old}`, { jwt }), 404);
      await deliver(address, message({ Subject: 'after clear' }, 'new'));
      const after = await list(jwt);
      assert.equal(after.json.count, 1);
      assert.equal(JSON.parse(after.json.results[0].metadata).subject, 'after clear');
      assert.deepEqual((await api('/api/clear_inbox', { method: 'DELETE', jwt })).json, { success: true }, 'clearing again is fine');
      assertPlainError(await api('/api/clear_inbox', { method: 'DELETE' }), 401);
    });
  });

  describe('DELETE /api/delete_address (docs/api.md "Authentication" rule 2)', () => {
    it('removes the address: its JWT is 401 everywhere, SMTP refuses it, the name is retired (free once its tombstone is purged), old mail stays gone', async () => {
      const old = await createAddress(server, { name: 'doomed' });
      await deliver(old.address, multipart({ Subject: 'before' }, 'b', [[{ 'Content-Type': 'text/plain' }, 'x'], [{ 'Content-Type': 'application/octet-stream', 'Content-Disposition': 'attachment; filename="a.bin"' }, 'abc']]));
      const oldUuid = (await list(old.jwt)).json.results[0].uuid;

      const res = await api('/api/delete_address', { method: 'DELETE', jwt: old.jwt });
      assert.equal(res.status, 200);
      assert.deepEqual(res.json, { success: true });

      for (const [method, path] of [
        ['GET', '/api/settings'],
        ['GET', '/api/mails?limit=10&offset=0'],
        ['GET', `/api/mail/${oldUuid}`],
        ['DELETE', `/api/mails/${oldUuid}`],
        ['DELETE', '/api/clear_inbox'],
        ['DELETE', '/api/delete_address'],
        ['GET', `/api/attachment/${oldUuid}/0`],
      ] as const) {
        assertPlainError(await api(path, { method, jwt: old.jwt }), 401);
        assertPlainError(await api(path, { method, headers: { cookie: `jwt=${old.jwt}` } }), 401);
      }

      // docs/decisions.md "Deleted address": SMTP refuses mail to it at RCPT.
      const smtp = await SmtpClient.connect(server.smtpPort);
      await smtp.script([
        ['EHLO client.test', 250],
        ['MAIL FROM:<s@example.org>', 250],
      ]);
      const rcpt = await smtp.command(`RCPT TO:<${old.address}>`);
      assert.equal(rcpt.code, 550);
      assert.match(rcpt.text, /^550 5\.1\.1 /);
      await smtp.quit();

      // Retired (docs/decisions.md "Deleted address"), until its tombstone is purged (here by a second connection).
      assertPlainError(await api('/api/new_address', { method: 'POST', body: { name: 'doomed' } }), 409);
      const other = openSqliteStore(join(server.dataDir, 'temp-inbox.sqlite'));
      try {
        const { jwtSecret } = JSON.parse(readFileSync(join(server.dataDir, 'secrets.json'), 'utf8')) as { jwtSecret: string };
        assert.equal(await other.purgeTombstones({ key: createTombstones(jwtSecret, 0).keyOf(old.address) }), 1);
      } finally {
        await other.close();
      }
      const reborn = await createAddress(server, { name: 'doomed' });
      assert.equal(reborn.address, old.address);
      assert.notEqual(decodeJwt(reborn.jwt)['aid'], decodeJwt(old.jwt)['aid'], 'a new address with a new id');
      assertPlainError(await api('/api/settings', { jwt: old.jwt }), 401);
      assert.deepEqual((await list(reborn.jwt)).json, { results: [], count: 0 });
      assertPlainError(await api(`/api/mail/${oldUuid}`, { jwt: reborn.jwt }), 404);
      await deliver(reborn.address, message({ Subject: 'to the new owner' }, 'hi'));
      assert.equal((await list(reborn.jwt)).json.count, 1);
      assertPlainError(await api('/api/mails?limit=10&offset=0', { jwt: old.jwt }), 401);
    });
  });

  describe('GET /api/attachment/{uuid}/{id}', () => {
    const binary = attachmentBytes(3000);
    const png = attachmentBytes(257);
    const name1 = 'Prüfbericht – 東京 (final).bin';
    const name2 = 'café ☕.png';
    let jwt: string;
    let uuid: string;
    before(async () => {
      let address: string;
      ({ jwt, address } = await createAddress(server, { name: 'attach' }));
      const msg = multipart({ From: 'a@example.org', To: address, Subject: 'files' }, '----=_Part_0_123.456', [
        [{ 'Content-Type': 'text/plain; charset=utf-8' }, 'See the attached files.'],
        [
          {
            'Content-Type': 'application/x-temp-inbox-test',
            'Content-Transfer-Encoding': 'base64',
            // RFC 2231 parameter value encoding
            'Content-Disposition': `attachment; filename*=UTF-8''${rfc2231(name1)}`,
          },
          base64Lines(binary),
        ],
        [
          {
            // RFC 2047 encoded word in a quoted parameter, as many mailers send it
            'Content-Type': `image/png; name="=?UTF-8?B?${Buffer.from(name2).toString('base64')}?="`,
            'Content-Transfer-Encoding': 'base64',
            'Content-Disposition': `attachment; filename="=?UTF-8?B?${Buffer.from(name2).toString('base64')}?="`,
          },
          base64Lines(png),
        ],
      ]);
      await deliver(address, msg);
      uuid = (await list(jwt)).json.results[0].uuid;
    });

    it('metadata.attachments lists {id, filename, content_type, size}', async () => {
      const meta = JSON.parse((await list(jwt)).json.results[0].metadata);
      assert.deepEqual(meta.attachments, [
        { id: '0', filename: name1, content_type: 'application/x-temp-inbox-test', size: binary.length },
        { id: '1', filename: name2, content_type: 'image/png', size: png.length },
      ]);
      assert.equal(meta.preview, 'See the attached files.');
    });

    it('returns the exact bytes, the part content type and Content-Disposition: attachment', async () => {
      for (const [id, bytes, type, name] of [
        ['0', binary, 'application/x-temp-inbox-test', name1],
        ['1', png, 'image/png', name2],
      ] as const) {
        const res = await fetch(`${server.httpUrl}/api/attachment/${uuid}/${id}`, { headers: { authorization: `Bearer ${jwt}` } });
        assert.equal(res.status, 200);
        assert.deepEqual(Buffer.from(await res.arrayBuffer()), bytes);
        assert.equal(res.headers.get('content-type'), type);
        const disposition = res.headers.get('content-disposition') ?? '';
        assert.match(disposition, /^attachment/);
        const star = /filename\*=UTF-8''([^;\s]+)/i.exec(disposition);
        assert.ok(star, disposition);
        assert.equal(decodeURIComponent(star[1]!), name, 'RFC 6266 filename* carries the exact name');
        // RFC 8187 value-chars: attr-char or %XX; "'", "(", ")" and "*" must be percent-encoded.
        assert.match(star[1]!, /^(?:[A-Za-z0-9!#$&+\-.^_`|~]|%[0-9A-F]{2})+$/, 'filename* uses only RFC 8187 value-chars');
        assert.match(disposition, /filename="[\x20-\x7e]*"/, 'an ASCII fallback filename');
      }
    });

    it('the jwt cookie works too', async () => {
      assert.equal((await api(`/api/attachment/${uuid}/0`, { headers: { cookie: `jwt=${jwt}` } })).status, 200);
    });

    it('unknown attachment id, unknown mail, another address: 404; no credentials: 401', async () => {
      for (const id of ['2', '99', 'x', '-1', '0.0']) assertPlainError(await api(`/api/attachment/${uuid}/${id}`, { jwt }), 404);
      assertPlainError(await api('/api/attachment/00000000-0000-4000-8000-000000000000/0', { jwt }), 404);
      const other = await createAddress(server, {});
      assertPlainError(await api(`/api/attachment/${uuid}/0`, { jwt: other.jwt }), 404);
      assertPlainError(await api(`/api/attachment/${uuid}/0`), 401);
    });
  });

  describe('MIME decoding into metadata', () => {
    let jwt: string;
    let address: string;
    before(async () => ({ jwt, address } = await createAddress(server, { name: 'mime' })));

    it('decodes RFC 2047 subjects: B and Q, UTF-8 and ISO-8859-1', async () => {
      const cases: [string, string][] = [
        [`=?UTF-8?B?${Buffer.from('Grüße aus München 🎉').toString('base64')}?=`, 'Grüße aus München 🎉'],
        ['=?UTF-8?Q?Caf=C3=A9_au_lait?=', 'Café au lait'],
        ['=?ISO-8859-1?Q?R=E9sum=E9_re=E7u?=', 'Résumé reçu'],
        [`=?iso-8859-1?B?${Buffer.from('Ærø Ålborg', 'latin1').toString('base64')}?=`, 'Ærø Ålborg'],
        ['Plain and =?UTF-8?Q?encod=C3=A9d?= mixed', 'Plain and encodéd mixed'],
      ];
      for (const [header, decoded] of cases) {
        await deliver(address, message({ Subject: header }, 'x'));
        const { meta } = await newest(jwt);
        assert.equal(meta.subject, decoded, header);
      }
    });

    it('decodes a quoted-printable body with soft line breaks and =C3=A9', async () => {
      const body = 'Caf=C3=A9 cr=C3=A8me: this line is long enough that it was wrapped with a so=\r\nft line break, and it=\r\n continues here.';
      await deliver(address, message({ Subject: 'qp', 'MIME-Version': '1.0', 'Content-Type': 'text/plain; charset=utf-8', 'Content-Transfer-Encoding': 'quoted-printable' }, body));
      const { meta } = await newest(jwt);
      assert.equal(meta.preview, 'Café crème: this line is long enough that it was wrapped with a soft line break, and it continues here.');
    });

    it('stores an 8-bit UTF-8 body sent raw after BODY=8BITMIME (RFC 6152)', async () => {
      const text = 'Grüße aus Köln — 東京からこんにちは ✓';
      const original = message({ Subject: '8bit', 'MIME-Version': '1.0', 'Content-Type': 'text/plain; charset=utf-8', 'Content-Transfer-Encoding': '8bit' }, text);
      const smtp = await SmtpClient.connect(server.smtpPort);
      const ehlo = await smtp.command('EHLO client.test');
      assert.match(ehlo.text, /^250[- ]8BITMIME\r$/m);
      await smtp.script([
        ['MAIL FROM:<x@example.org> BODY=8BITMIME', 250],
        [`RCPT TO:<${address}>`, 250],
        ['DATA', 354],
      ]);
      assert.equal((await smtp.data(Buffer.from(original, 'utf8'))).code, 250);
      await smtp.quit();
      const { meta, full } = await newest(jwt);
      assert.equal(meta.preview, text);
      assert.ok(full.raw.endsWith(original), 'the UTF-8 bytes arrive unchanged');
    });

    it('an HTML-only mail: has_html true, preview from the HTML text', async () => {
      const html = '<!doctype html><html><head><style>p{color:red}</style><title>t</title></head><body><p>Hello <b>HTML</b>&nbsp;world &amp; friends</p><script>alert(1)</script></body></html>';
      await deliver(address, message({ Subject: 'html', 'MIME-Version': '1.0', 'Content-Type': 'text/html; charset=utf-8' }, html));
      const { meta } = await newest(jwt);
      assert.equal(meta.has_html, true);
      assert.match(meta.preview, /^Hello HTML world & friends/);
      assert.doesNotMatch(meta.preview, /color:red|alert|<|>/);
    });

    it('finds verification codes', async () => {
      await deliver(address, message({ Subject: 'Your verification code' }, 'Hi,\nYour verification code is 834521\nThanks'));
      assert.deepEqual((await newest(jwt)).meta.codes, ['834521']);
      await deliver(address, message({ Subject: 'Sign in' }, 'OTP: A7K9Q2\nIt expires in 10 minutes.'));
      assert.ok((await newest(jwt)).meta.codes.includes('A7K9Q2'));
    });

    it('finds a spaced code laid out in an HTML table, one group per cell on its own source line', async () => {
      const html = [
        '<table><tr><td>Your sign-in code</td></tr>',
        '<tr>',
        '  <td class="g">736</td>',
        '  <td>&nbsp;</td>',
        '  <td class="g">205</td>',
        '</tr>',
        '<tr><td>Suite 210, Portland, OR 97201</td></tr></table>',
      ].join('\r\n');
      await deliver(address, message({ Subject: 'Sign in', 'MIME-Version': '1.0', 'Content-Type': 'text/html; charset=utf-8' }, html));
      assert.deepEqual((await newest(jwt)).meta.codes, ['736 205']);
    });

    it('finds links: href in HTML and a bare URL in the text', async () => {
      const msg = multipart({ Subject: 'Confirm your email' }, 'alt', [
        [{ 'Content-Type': 'text/plain; charset=utf-8' }, 'Confirm here: https://example.com/confirm?t=abc123.\nOr see https://example.com/help'],
        [{ 'Content-Type': 'text/html; charset=utf-8' }, '<p><a href="https://example.com/verify?token=xyz&amp;u=42">Verify</a></p>'],
      ]).replace('multipart/mixed', 'multipart/alternative');
      await deliver(address, msg);
      const { meta } = await newest(jwt);
      assert.equal(meta.has_html, true);
      for (const link of ['https://example.com/verify?token=xyz&u=42', 'https://example.com/confirm?t=abc123', 'https://example.com/help']) {
        assert.ok(meta.links.includes(link), `${link} in ${JSON.stringify(meta.links)}`);
      }
    });
  });

  describe('system endpoints', () => {
    it('GET /health_check: 200 {status:"ok", version:"1.0.0"}', async () => {
      const res = await api('/health_check');
      assert.equal(res.status, 200);
      assert.deepEqual(res.json, { status: 'ok', version: '1.0.0', storage: 'ok' });
    });

    it('GET /openapi.json: OpenAPI 3.1, info.version 1.0.0, every path and method of the interface', async () => {
      const res = await api('/openapi.json');
      assert.equal(res.status, 200);
      const doc = res.json;
      assert.match(doc.openapi, /^3\.1\.\d+$/);
      assert.equal(doc.info.version, '1.0.0');
      const seed: [string, string][] = [
        ['post', '/api/new_address'],
        ['get', '/api/settings'],
        ['delete', '/api/delete_address'],
        ['get', '/api/mails'],
        ['get', '/api/mail/{uuid}'],
        ['delete', '/api/mails/{uuid}'],
        ['delete', '/api/clear_inbox'],
        ['get', '/api/session/addresses'],
        ['post', '/api/switch_address'],
        ['post', '/api/logout'],
        ['get', '/health_check'],
      ];
      for (const [method, path] of seed) assert.ok(doc.paths?.[path]?.[method], `${method.toUpperCase()} ${path} in openapi.json`);
      assert.ok(Object.keys(doc.paths).some((p) => p.startsWith('/api/attachment/')), 'the attachment path family');
    });

    it('unknown routes: 404 plain text', async () => {
      assertPlainError(await api('/api/nope'), 404);
    });
  });
});

describe('api: configuration variants', () => {
  describe('MAIL_DOMAINS=a.test,b.test', () => {
    let server: TestServer;
    before(async () => (server = await startTestServer({ MAIL_DOMAINS: 'a.test,b.test' })));
    after(() => server.close());

    it('the first domain is the default; an address on the second domain works and receives mail', async () => {
      assert.match((await createAddress(server, {})).address, /@a\.test$/);
      const { address, jwt } = await createAddress(server, { name: 'second', domain: 'B.Test' });
      assert.equal(address, 'second@b.test');
      await sendMail(server.smtpPort, { to: ['Second@B.TEST'], message: message({ Subject: 'on b' }, 'hello b') });
      const res = await client(server)('/api/mails?limit=10&offset=0', { jwt });
      assert.equal(res.json.count, 1);
      assert.equal(res.json.results[0].address, 'second@b.test');
      assertPlainError(await client(server)('/api/new_address', { body: { domain: DOMAIN } }), 400);
    });

    it('the same name on two domains is two addresses', async () => {
      const a = await createAddress(server, { name: 'twin', domain: 'a.test' });
      const b = await createAddress(server, { name: 'twin', domain: 'b.test' });
      await sendMail(server.smtpPort, { to: ['twin@b.test'], message: message({ Subject: 'b only' }, 'x') });
      assert.equal((await client(server)('/api/mails?limit=10&offset=0', { jwt: a.jwt })).json.count, 0);
      assert.equal((await client(server)('/api/mails?limit=10&offset=0', { jwt: b.jwt })).json.count, 1);
    });
  });

  describe('CUSTOM_NAMES=false', () => {
    let server: TestServer;
    before(async () => (server = await startTestServer({ CUSTOM_NAMES: 'false' })));
    after(() => server.close());

    it('a requested name is 403; {} and no body still work', async () => {
      assertPlainError(await client(server)('/api/new_address', { body: { name: 'wanted' } }), 403);
      assert.match((await createAddress(server, {})).address, /^[a-z0-9]{10}@/);
      assert.equal((await client(server)('/api/new_address', { method: 'POST' })).status, 200);
    });
  });

  describe('restart on the same DATA_DIR', () => {
    let first: TestServer | undefined;
    let second: TestServer | undefined;
    after(async () => {
      await first?.close({ keepData: true });
      await second?.close();
      if (first) rmSync(first.dataDir, { recursive: true, force: true });
    });

    it('addresses, JWTs, sessions, mails and soft deletes survive', async () => {
      first = await startTestServer();
      const jar = new CookieJar();
      const res = await client(first)('/api/new_address', { body: { name: 'survivor' }, jar });
      const { address, jwt } = res.json as { address: string; jwt: string };
      await sendMail(first.smtpPort, { to: [address], message: message({ Subject: 'kept' }, 'kept') });
      await sendMail(first.smtpPort, { to: [address], message: message({ Subject: 'deleted' }, 'deleted') });
      const [deleted, kept] = (await client(first)('/api/mails?limit=10&offset=0', { jwt })).json.results as { uuid: string }[];
      assert.equal((await client(first)(`/api/mails/${deleted!.uuid}`, { method: 'DELETE', jwt })).status, 200);
      await first.close({ keepData: true });

      second = await startTestServer({}, first.dataDir);
      const api = client(second);
      assert.deepEqual((await api('/api/settings', { jwt })).json, { address });
      const page = await api('/api/mails?limit=10&offset=0', { jwt });
      assert.equal(page.json.count, 1);
      assert.equal(page.json.results[0].uuid, kept!.uuid);
      assert.equal((await api(`/api/mail/${kept!.uuid}`, { jwt })).status, 200);
      assertPlainError(await api(`/api/mail/${deleted!.uuid}`, { jwt }), 404);
      const session = await api('/api/session/addresses', { jar });
      assert.equal(session.status, 200, session.text);
      assert.equal(session.json.activeAddress, address);
      await sendMail(second.smtpPort, { to: [address], message: message({ Subject: 'after restart' }, 'x') });
      assert.equal((await api('/api/mails?limit=10&offset=0', { jwt })).json.count, 2);
      assertPlainError(await api('/api/new_address', { body: { name: 'survivor' } }), 409);
    });
  });
});
