// Reliability — security checks as tests (issue "Reliability"): address isolation
// across every JWT endpoint, expired and forged tokens, session fixation, header
// injection through names and HELO, and oversized requests refused cleanly.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { decodeJwt, SignJWT } from 'jose';
import { parseMessage } from '../../src/mail/parse/parse.js';
import { createTombstones } from '../../src/domain/tombstones.js';
import { openSqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import { client, CookieJar, createAddress, DOMAIN, message, sendMail, SmtpClient, startTestServer, type HttpResult, type TestServer } from '../helpers/harness.js';

const TEXT = 'text/plain; charset=utf-8';

function assertPlainError(res: HttpResult, status: number, what: string): void {
  assert.equal(res.status, status, `${what}: ${res.status} ${res.text}`);
  assert.equal(res.headers.get('content-type'), TEXT, `${what}: content type`);
  assert.ok(res.text.length > 0 && !/at .+\.(ts|js):\d+/.test(res.text), `${what}: a short sentence, no stack`);
}

interface RawResponse {
  raw: string;
  status: number;
  headerLines: string[];
  body: string;
  /** The server closed the connection (FIN or RST) after answering. */
  closed: boolean;
  error?: string;
}

/**
 * Writes bytes to the HTTP port and reads until the server closes the connection.
 * A complete response without a close within 5 s resolves with closed=false;
 * no response at all within 5 s is a failure (a hung request).
 */
function rawHttp(port: number, payload: string | Buffer): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let data = '';
    let error: string | undefined;
    let done = false;
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      const headEnd = data.indexOf('\r\n\r\n');
      if (headEnd < 0) return reject(new Error(`no complete response (closed=${closed}, error=${error}): ${JSON.stringify(data.slice(0, 200))}`));
      const [statusLine, ...headerLines] = data.slice(0, headEnd).split('\r\n');
      const status = Number(/^HTTP\/1\.[01] (\d{3}) /.exec(statusLine!)?.[1]);
      resolve({ raw: data, status, headerLines, body: data.slice(headEnd + 4), closed, ...(error ? { error } : {}) });
    };
    const timer = setTimeout(() => finish(false), 5000);
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => (data += d));
    socket.on('error', (e: NodeJS.ErrnoException) => (error = e.code ?? e.message));
    socket.on('close', () => finish(true));
    socket.on('connect', () => socket.write(payload));
  });
}

/** Every response header line is one well-formed `name: value` line. */
function assertHeadersIntact(lines: string[], what: string): void {
  for (const line of lines) {
    assert.match(line, /^[!#$%&'*+.^_`|~0-9A-Za-z-]+: [\t\x20-\x7e]*$/, `${what}: header line ${JSON.stringify(line)}`);
    assert.ok(!/^(x-injected|injected)/i.test(line), `${what}: injected header ${line}`);
  }
}

const b64Lines = (buf: Buffer) => buf.toString('base64').replace(/.{1,76}/g, '$&\r\n');

describe('security', { timeout: 60_000 }, () => {
  let server: TestServer;
  let http: ReturnType<typeof client>;
  let secrets: { jwtSecret: string; sessionSecret: string };
  before(async () => {
    server = await startTestServer();
    http = client(server);
    secrets = JSON.parse(readFileSync(join(server.dataDir, 'secrets.json'), 'utf8'));
  });
  after(() => server.close());

  /** Frees a deleted address's name: its tombstone (keyed by the server's JWT_SECRET) removed by a second connection. */
  async function freeName(address: string): Promise<void> {
    const other = openSqliteStore(join(server.dataDir, 'temp-inbox.sqlite'));
    try {
      assert.equal(await other.purgeTombstones({ key: createTombstones(secrets.jwtSecret, 0).keyOf(address) }), 1, `the tombstone of ${address}`);
    } finally {
      await other.close();
    }
  }

  async function deliver(to: string, subject: string, withAttachment = false): Promise<void> {
    const body = withAttachment
      ? [
          'MIME-Version: 1.0',
          `Subject: ${subject}`,
          'Content-Type: multipart/mixed; boundary="SEC"',
          '',
          '--SEC',
          'Content-Type: text/plain',
          '',
          `secret text of ${to}`,
          '--SEC',
          'Content-Type: application/octet-stream',
          'Content-Transfer-Encoding: base64',
          'Content-Disposition: attachment; filename="secret.bin"',
          '',
          b64Lines(Buffer.from(`attachment of ${to}`)),
          '--SEC--',
          '',
        ].join('\r\n')
      : message({ Subject: subject }, `text of ${to}`);
    await sendMail(server.smtpPort, { to: [to], message: body });
  }

  async function firstMail(jwt: string): Promise<{ uuid: string; address: string }> {
    const res = await http('/api/mails?limit=100&offset=0', { jwt });
    assert.equal(res.status, 200);
    return res.json.results[0];
  }

  describe('address isolation across every JWT endpoint', () => {
    it("A's credentials never reach B's mail, and A's list/settings/clear/delete affect only A", async () => {
      const a = await createAddress(server, { name: 'iso-a' });
      const b = await createAddress(server, { name: 'iso-b' });
      await deliver(a.address, 'for A', true);
      await deliver(b.address, 'for B', true);
      const mailA = await firstMail(a.jwt);
      const mailB = await firstMail(b.jwt);

      // Bearer header, and the jwt cookie alone.
      const asA = [
        { label: 'bearer', opts: { jwt: a.jwt } },
        { label: 'cookie', opts: { headers: { cookie: `jwt=${a.jwt}` } } },
        // A valid header wins over another address's cookie.
        { label: 'bearer A + cookie B', opts: { jwt: a.jwt, headers: { cookie: `jwt=${b.jwt}` } } },
      ];
      for (const { label, opts } of asA) {
        assertPlainError(await http(`/api/mail/${mailB.uuid}`, opts), 404, `${label}: GET B's mail`);
        assertPlainError(await http(`/api/attachment/${mailB.uuid}/0`, opts), 404, `${label}: B's attachment`);
        assertPlainError(await http(`/api/mails/${mailB.uuid}`, { ...opts, method: 'DELETE' }), 404, `${label}: DELETE B's mail`);
        const list = await http('/api/mails?limit=100&offset=0', opts);
        assert.equal(list.status, 200);
        assert.equal(list.json.count, 1, `${label}: A's count is A's alone`);
        assert.deepEqual(
          list.json.results.map((m: { uuid: string; address: string }) => [m.uuid, m.address]),
          [[mailA.uuid, a.address]],
        );
        assert.equal((await http('/api/settings', opts)).json.address, a.address, `${label}: settings`);
        const waited = await http('/api/mails/wait?since=0&timeout=0', opts);
        assert.deepEqual(waited.json.results.map((m: { uuid: string }) => m.uuid), [mailA.uuid], `${label}: wait answers with A's mail alone`);
        // A's own mail is readable the same way (the 404s above are not a broken credential).
        assert.equal((await http(`/api/mail/${mailA.uuid}`, opts)).status, 200, `${label}: A's own mail`);
        assert.equal((await http(`/api/attachment/${mailA.uuid}/0`, opts)).status, 200, `${label}: A's own attachment`);
      }
      // A malformed header is refused even with B's valid cookie (docs/decisions.md "JWT").
      assertPlainError(await http(`/api/mail/${mailB.uuid}`, { headers: { authorization: `Bearer ${a.jwt}x`, cookie: `jwt=${b.jwt}` } }), 401, 'bad header + cookie');

      const intactB = async (what: string) => {
        const list = await http('/api/mails?limit=100&offset=0', { jwt: b.jwt });
        assert.equal(list.json.count, 1, `${what}: B still has its mail`);
        const full = await http(`/api/mail/${mailB.uuid}`, { jwt: b.jwt });
        assert.equal(full.status, 200, what);
        assert.match(full.json.raw, /Subject: for B/);
        assert.equal((await http(`/api/attachment/${mailB.uuid}/0`, { jwt: b.jwt })).text, `attachment of ${b.address}`);
      };
      await intactB('after A tried to delete it');

      assert.deepEqual((await http('/api/clear_inbox', { method: 'DELETE', jwt: a.jwt })).json, { success: true });
      assert.equal((await http('/api/mails?limit=100&offset=0', { jwt: a.jwt })).json.count, 0, "A's inbox is empty");
      await intactB("after A's clear_inbox");

      assert.deepEqual((await http('/api/delete_address', { method: 'DELETE', jwt: a.jwt })).json, { success: true });
      assertPlainError(await http('/api/settings', { jwt: a.jwt }), 401, "A's JWT after delete_address");
      await intactB("after A's delete_address");
      assert.equal((await http('/api/settings', { jwt: b.jwt })).json.address, b.address);

      // And the other way round: B's JWT does not see what arrives for a new A (its name freed first:
      // a deleted address's is retired, docs/decisions.md "Deleted address").
      await freeName(a.address);
      const a2 = await createAddress(server, { name: 'iso-a' });
      await deliver(a2.address, 'for new A');
      const mailA2 = await firstMail(a2.jwt);
      assertPlainError(await http(`/api/mail/${mailA2.uuid}`, { jwt: b.jwt }), 404, "B reads new A's mail");
      assertPlainError(await http(`/api/mail/${mailA2.uuid}`, { jwt: a.jwt }), 401, "old A's JWT on new A's mail");
    });

    it("a session holding A cannot list or switch to B", async () => {
      const jar = new CookieJar();
      const a = await createAddress(server, { name: 'iso-sess-a' }, jar);
      const b = await createAddress(server, { name: 'iso-sess-b' });
      const listing = await http('/api/session/addresses', { jar });
      assert.deepEqual(listing.json.addresses.map((x: { address: string }) => x.address), [a.address]);
      assertPlainError(await http('/api/switch_address', { method: 'POST', body: { address: b.address }, jar }), 403, 'switch to a foreign address');
      assert.equal((await http('/api/settings', { jar })).json.address, a.address, 'the jwt cookie still belongs to A');
    });
  });

  describe('tokens', () => {
    it('expired, alg none, HS512, wrong secret, swapped claims, recreated name and truncated tokens are all 401 text/plain', async () => {
      const a = await createAddress(server, { name: 'tok-a' });
      const b = await createAddress(server, { name: 'tok-b' });
      await deliver(a.address, 'token test');
      const uuid = (await firstMail(a.jwt)).uuid;
      const aid = decodeJwt(a.jwt)['aid'] as number;
      const bid = decodeJwt(b.jwt)['aid'] as number;
      const key = new TextEncoder().encode(secrets.jwtSecret);
      const now = Math.floor(Date.now() / 1000);
      const sign = (claims: Record<string, unknown>, opts: { alg?: string; key?: Uint8Array; sub?: string; iat?: number; exp?: number } = {}) => {
        let t = new SignJWT(claims).setProtectedHeader({ alg: opts.alg ?? 'HS256', typ: 'JWT' });
        if (opts.sub !== undefined) t = t.setSubject(opts.sub);
        if (opts.iat !== undefined) t = t.setIssuedAt(opts.iat);
        if (opts.exp !== undefined) t = t.setExpirationTime(opts.exp);
        return t.sign(opts.key ?? key);
      };
      const b64url = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
      const payload = { sub: a.address, aid, iat: now, exp: now + 3600 };

      // Control: a token made the same way with the right secret and claims works,
      // so every refusal below is about the one thing that differs.
      const control = await sign({ aid }, { sub: a.address, iat: now, exp: now + 3600 });
      assert.equal((await http('/api/settings', { jwt: control })).status, 200, 'a correctly self-signed token is accepted');

      // Deleted, then recreated under the same name.
      const gone = await createAddress(server, { name: 'tok-recreated' });
      assert.equal((await http('/api/delete_address', { method: 'DELETE', jwt: gone.jwt })).status, 200);
      // Its name is retired until its tombstone is purged (docs/decisions.md "Deleted address").
      await freeName(gone.address);
      const recreated = await createAddress(server, { name: 'tok-recreated' });
      assert.equal(recreated.address, gone.address);
      assert.equal((await http('/api/settings', { jwt: recreated.jwt })).status, 200);

      const bad: Record<string, string> = {
        expired: await sign({ aid }, { sub: a.address, iat: now - 8 * 86400, exp: now - 86400 }),
        'expired a second ago': await sign({ aid }, { sub: a.address, iat: now - 7 * 86400, exp: now - 1 }),
        'not yet valid (nbf)': await sign({ aid, nbf: now + 3600 }, { sub: a.address, iat: now, exp: now + 7200 }),
        'alg none, empty signature': `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url(payload)}.`,
        'alg none, some signature': `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url(payload)}.${Buffer.from('sig').toString('base64url')}`,
        'alg none, lower-case': `${b64url({ alg: 'nOnE' })}.${b64url(payload)}.AAAA`,
        HS512: await sign({ aid }, { alg: 'HS512', sub: a.address, iat: now, exp: now + 3600 }),
        HS384: await sign({ aid }, { alg: 'HS384', sub: a.address, iat: now, exp: now + 3600 }),
        'RS256 header over an HMAC signature': (() => {
          const head = `${b64url({ alg: 'RS256', typ: 'JWT' })}.${b64url(payload)}`;
          return `${head}.${createHmac('sha256', secrets.jwtSecret).update(head).digest('base64url')}`;
        })(),
        'wrong secret': await sign({ aid }, { key: new TextEncoder().encode(secrets.jwtSecret + 'x'), sub: a.address, iat: now, exp: now + 3600 }),
        'session secret': await sign({ aid }, { key: new TextEncoder().encode(secrets.sessionSecret), sub: a.address, iat: now, exp: now + 3600 }),
        "aid of B, sub of A": await sign({ aid: bid }, { sub: a.address, iat: now, exp: now + 3600 }),
        "aid of A, sub of B": await sign({ aid }, { sub: b.address, iat: now, exp: now + 3600 }),
        'aid as a string': await sign({ aid: String(aid) }, { sub: a.address, iat: now, exp: now + 3600 }),
        'aid missing': await sign({}, { sub: a.address, iat: now, exp: now + 3600 }),
        'sub missing': await sign({ aid }, { iat: now, exp: now + 3600 }),
        'exp missing': await sign({ aid }, { sub: a.address, iat: now }),
        'iat missing': await sign({ aid }, { sub: a.address, exp: now + 3600 }),
        'sub upper-cased': await sign({ aid }, { sub: a.address.toUpperCase(), iat: now, exp: now + 3600 }),
        'deleted then recreated name': gone.jwt,
        'truncated by one character': a.jwt.slice(0, -1),
        'signature cut off': a.jwt.slice(0, a.jwt.lastIndexOf('.') + 1),
        'two segments': a.jwt.slice(0, a.jwt.lastIndexOf('.')),
        'payload swapped in from B': (() => {
          const [h, , s] = a.jwt.split('.');
          return `${h}.${b.jwt.split('.')[1]}.${s}`;
        })(),
        'header altered': (() => {
          const [, p, s] = a.jwt.split('.');
          return `${b64url({ alg: 'HS256', typ: 'JWT', kid: '../../secrets' })}.${p}.${s}`;
        })(),
        empty: '',
      };
      for (const [what, token] of Object.entries(bad)) {
        for (const [method, path] of [
          ['GET', '/api/settings'],
          ['GET', '/api/mails?limit=10&offset=0'],
          ['GET', `/api/mail/${uuid}`],
          ['GET', '/api/mails/wait?timeout=0'],
          ['GET', '/api/events'],
        ] as const) {
          assertPlainError(await http(path, { method, headers: { authorization: `Bearer ${token}` } }), 401, `${what}: ${method} ${path} (bearer)`);
          if (token) assertPlainError(await http(path, { method, headers: { cookie: `jwt=${token}` } }), 401, `${what}: ${method} ${path} (cookie)`);
        }
      }
      // No forged token could delete anything: A still has its mail.
      for (const token of Object.values(bad)) {
        await http('/api/clear_inbox', { method: 'DELETE', headers: { authorization: `Bearer ${token}` } });
        await http('/api/delete_address', { method: 'DELETE', headers: { authorization: `Bearer ${token}` } });
      }
      assert.equal((await http('/api/mails?limit=10&offset=0', { jwt: a.jwt })).json.count, 1);
      assert.equal((await http('/api/settings', { jwt: b.jwt })).status, 200);
      assert.equal((await http('/api/settings', { jwt: recreated.jwt })).status, 200);
    });
  });

  describe('session fixation', () => {
    /** The session id inside a Set-Cookie `session_id=<id>.<hmac>`. */
    const sessionIdOf = (setCookies: string[]): { id: string; value: string } => {
      const sc = setCookies.find((c) => c.startsWith('session_id='));
      assert.ok(sc, 'a session_id cookie is set');
      const value = decodeURIComponent(sc.slice('session_id='.length).split(';')[0]!);
      return { id: value.slice(0, value.lastIndexOf('.')), value };
    };
    const signWith = (secret: string, value: string) => `${value}.${createHmac('sha256', secret).update(value).digest('base64').replace(/=/g, '')}`;
    const cookieFor = (value: string) => `session_id=${encodeURIComponent(value)}`;

    it('a client-chosen session id is never adopted: raw, signed with a wrong key, or even correctly signed', async () => {
      // Our signing matches the server's: re-signing a real id reproduces its cookie.
      const real = sessionIdOf((await http('/api/new_address', { method: 'POST', body: {} })).setCookies);
      assert.equal(signWith(secrets.sessionSecret, real.id), real.value);

      const chosen = 'attacker-chosen-session-id-0123456789';
      const attempts: Record<string, string> = {
        raw: cookieFor(chosen),
        'signed with a wrong key': cookieFor(signWith('not-the-secret', chosen)),
        'signed with the JWT secret': cookieFor(signWith(secrets.jwtSecret, chosen)),
        'correctly signed but unknown': cookieFor(signWith(secrets.sessionSecret, chosen)),
        'empty id, correctly signed': cookieFor(signWith(secrets.sessionSecret, '')),
      };
      for (const [what, cookie] of Object.entries(attempts)) {
        const created = await http('/api/new_address', { method: 'POST', body: {}, headers: { cookie } });
        assert.equal(created.status, 200, what);
        const minted = sessionIdOf(created.setCookies);
        assert.notEqual(minted.id, chosen, `${what}: the chosen id was adopted`);
        assert.match(minted.id, /^[A-Za-z0-9_-]{32,}$/, `${what}: a freshly minted random id`);
        assert.equal(signWith(secrets.sessionSecret, minted.id), minted.value);

        // The minted session is the one that holds the new address...
        const listing = await http('/api/session/addresses', { headers: { cookie: cookieFor(minted.value) } });
        assert.equal(listing.status, 200, what);
        assert.deepEqual(listing.json.addresses.map((x: { address: string }) => x.address), [created.json.address]);
        // ...and the chosen id is valid nowhere, in any of its forms.
        for (const form of Object.values(attempts)) {
          assertPlainError(await http('/api/session/addresses', { headers: { cookie: form } }), 401, `${what}: chosen id on /api/session/addresses`);
          assertPlainError(await http('/api/switch_address', { method: 'POST', body: { address: created.json.address }, headers: { cookie: form } }), 401, `${what}: chosen id on switch`);
        }
      }
    });

    it('a session id seen by a third party stops working once rotated (switch) or ended (logout)', async () => {
      const jar = new CookieJar();
      const first = await createAddress(server, {}, jar);
      const second = await createAddress(server, {}, jar);
      const leaked = jar.cookies.get('session_id')!;
      assert.equal((await http('/api/switch_address', { method: 'POST', body: { address: first.address }, jar })).status, 200);
      assert.notEqual(jar.cookies.get('session_id'), leaked);
      assertPlainError(await http('/api/session/addresses', { headers: { cookie: `session_id=${leaked}` } }), 401, 'leaked id after switch');
      const current = jar.cookies.get('session_id')!;
      assert.equal((await http('/api/logout', { method: 'POST', jar })).status, 200);
      assertPlainError(await http('/api/session/addresses', { headers: { cookie: `session_id=${current}` } }), 401, 'id after logout');
      assert.equal((await http('/api/settings', { jwt: second.jwt })).status, 200, 'the addresses live on');
    });
  });

  describe('header injection', () => {
    it('names with CR/LF, encoded CR/LF, quotes, semicolons or markup are 400 and never split a response header', async () => {
      const names = [
        'inj\r\nSet-Cookie: injected=1',
        'inj\nX-Injected: 1',
        'inj\rX-Injected: 1',
        'inj%0d%0aSet-Cookie:%20injected=1',
        'inj%0D%0AX-Injected:%201',
        'inj"quoted',
        'inj;path=/',
        'inj; Domain=evil.example',
        '<script>alert(1)</script>',
        'inj\u2028x',
        'inj\u0000x',
        'inj\u0085x',
        'inj\u010d\u010aX-Injected: 1',
      ];
      for (const name of names) {
        const body = JSON.stringify({ name });
        const res = await rawHttp(server.httpPort, `POST /api/new_address HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
        assert.equal(res.status, 400, `${JSON.stringify(name)}: ${res.raw}`);
        assertHeadersIntact(res.headerLines, JSON.stringify(name));
        assert.ok(!res.headerLines.some((l) => /^set-cookie:/i.test(l)), `${JSON.stringify(name)}: no cookie for a refused name`);
        assert.ok(res.headerLines.includes(`content-type: ${TEXT}`), JSON.stringify(name));
      }

      // A valid name: the cookies are exactly the two expected, each one line.
      const ok = await rawHttp(server.httpPort, `POST /api/new_address HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 22\r\nConnection: close\r\n\r\n{"name":"inj-ok.name"}`);
      assert.equal(ok.status, 200, ok.raw);
      assertHeadersIntact(ok.headerLines, 'valid name');
      const cookies = ok.headerLines.filter((l) => /^set-cookie:/i.test(l));
      assert.equal(cookies.length, 2);
      assert.match(cookies[0]!, /^set-cookie: jwt=[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+; Max-Age=604800; Path=\/; HttpOnly; SameSite=Lax$/i);
      assert.match(cookies[1]!, /^set-cookie: session_id=[A-Za-z0-9_%.-]+; Max-Age=2592000; Path=\/; HttpOnly; SameSite=Lax$/i);

      // Other inputs that end up near headers: a switch target and an unknown path.
      const jar = new CookieJar();
      await createAddress(server, {}, jar);
      const sw = await rawHttp(
        server.httpPort,
        `POST /api/switch_address HTTP/1.1\r\nHost: x\r\nCookie: ${jar.header()}\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: ${JSON.stringify({ address: 'a\r\nX-Injected: 1' }).length}\r\n\r\n${JSON.stringify({ address: 'a\r\nX-Injected: 1' })}`,
      );
      assert.equal(sw.status, 403);
      assertHeadersIntact(sw.headerLines, 'switch_address');
      const nf = await rawHttp(server.httpPort, `GET /api/nope%0d%0aX-Injected:%201 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      assert.equal(nf.status, 404);
      assertHeadersIntact(nf.headerLines, 'unknown path');
    });

    it('a HELO name with control characters, parentheses or a fake "for <…>" cannot break the Received: header', async () => {
      const helos = [
        'evil(comment)host',
        'a)b(c\\d',
        '((((((',
        'host\x01\x02\x1b[31mred',
        'host\x00nul',
        'a\tb c d',
        'tab\there',
        'x'.repeat(600),
        'host; for <victim@example.com>',
        '=?utf-8?q?encoded?=',
        '[127.0.0.1]',
        'host\x7fdel\xe9\xff',
        // Accepted by smtp-server (no C0/C1 controls, one word, <= 300 characters)
        // but outside what a Received: comment may hold: 8-bit, quotes, brackets.
        Buffer.from('höst.ü-éxample  x', 'utf8').toString('latin1'),
        '"quoted"<angle>[br]{c}\\',
        'y'.repeat(299),
        'by\u00a0mx.test',
      ];
      const { address, jwt } = await createAddress(server, { name: 'helo-target' });
      const stored: string[] = [];
      for (const [i, helo] of helos.entries()) {
        const smtp = await SmtpClient.connect(server.smtpPort);
        try {
          let greeted = (await smtp.command(`EHLO ${helo}`)).code === 250;
          if (!greeted) greeted = (await smtp.command(`HELO ${helo}`)).code === 250;
          if (!greeted) continue; // refused outright (501): nothing is stored, nothing can break
          stored.push(helo);
          assert.equal((await smtp.command('MAIL FROM:<helo@example.com>')).code, 250);
          assert.equal((await smtp.command(`RCPT TO:<${address}>`)).code, 250);
          assert.equal((await smtp.command('DATA')).code, 354);
          assert.equal((await smtp.data(message({ Subject: `helo ${i}`, 'X-Original': 'first' }, 'body'))).code, 250);
        } finally {
          await smtp.quit();
        }
        const uuid = (await firstMail(jwt)).uuid;
        const { raw } = (await http(`/api/mail/${uuid}`, { jwt })).json as { raw: string };
        const head = raw.slice(0, raw.indexOf('\r\n\r\n'));
        const lines = head.split('\r\n');
        // One folded Received: header (its first line plus tab-indented continuations)...
        assert.match(lines[0]!, /^Received: from \S/, `helo ${JSON.stringify(helo)}: ${lines[0]}`);
        let n = 1;
        while (n < lines.length && /^[ \t]/.test(lines[n]!)) n++;
        const received = lines.slice(0, n).join('\r\n');
        // ...then the message's own first header, untouched.
        assert.equal(lines[n], `Subject: helo ${i}`, `helo ${JSON.stringify(helo)}: the original headers follow`);
        // eslint-disable-next-line no-control-regex -- control characters are what this test looks for
        assert.doesNotMatch(received, /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\uffff]/, `helo ${JSON.stringify(helo)}: no control or 8-bit characters`);
        assert.match(received, /\tby mx\.test \(temp-inbox\) with ESMTP id [0-9a-f]{8}\r\n\tfor <helo-target@temp-inbox\.localhost>; /, `helo ${JSON.stringify(helo)}`);
        assert.equal((received.match(/for </g) ?? []).length, 1, `helo ${JSON.stringify(helo)}: one recipient clause`);
        let depth = 0;
        for (const c of received) {
          depth += c === '(' ? 1 : c === ')' ? -1 : 0;
          assert.ok(depth >= 0 && depth <= 1, `helo ${JSON.stringify(helo)}: comments stay balanced: ${received}`);
        }
        assert.equal(depth, 0);
        // A MIME parser sees the same thing.
        const parsed = await parseMessage(Buffer.from(raw, 'utf8'));
        assert.equal(parsed?.subject, `helo ${i}`);
        assert.equal(parsed?.headers[0]?.key, 'received');
        assert.equal(parsed?.headers.filter((h) => h.key === 'received').length, 1);
        assert.equal(parsed?.headers.find((h) => h.key === 'x-original')?.value, 'first');
        assert.equal((await http(`/api/mails/${uuid}`, { method: 'DELETE', jwt })).status, 200);
      }
      // The hostile names smtp-server lets through did reach the Received: line.
      assert.ok(stored.length >= 8, `only ${stored.length} HELO names were accepted: ${JSON.stringify(stored)}`);
    });
  });

  describe('oversized requests are refused cleanly', () => {
    it('a JSON body over 64 KiB is 413 text/plain, also when the declared length is huge or the body is chunked', async () => {
      const big = JSON.stringify({ name: 'big', padding: 'x'.repeat(64 * 1024) });
      assertPlainError(await http('/api/new_address', { method: 'POST', body: big }), 413, 'new_address 64 KiB');
      const jar = new CookieJar();
      await createAddress(server, {}, jar);
      assertPlainError(await http('/api/switch_address', { method: 'POST', body: JSON.stringify({ address: 'x'.repeat(100 * 1024) }), jar }), 413, 'switch_address 100 KiB');

      // Content-Length of 10 GB with a few bytes sent: refused at once, not awaited.
      const declared = await rawHttp(server.httpPort, 'POST /api/new_address HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 10000000000\r\n\r\n{"na');
      assert.equal(declared.status, 413, declared.raw);
      assert.ok(declared.headerLines.some((l) => l.toLowerCase() === `content-type: ${TEXT}`), declared.raw);

      // Chunked, 80 KiB in 8 KiB chunks.
      const chunk = 'y'.repeat(8192);
      const chunks = `{"padding":"` + chunk.repeat(10) + `"}`;
      const chunked = await rawHttp(
        server.httpPort,
        `POST /api/new_address HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n${chunks.length.toString(16)}\r\n${chunks}\r\n0\r\n\r\n`,
      );
      assert.equal(chunked.status, 413, chunked.raw.slice(0, 300));
      assert.equal((await http('/health_check')).status, 200);
    });

    it('20 KB of request headers, or a 20 KB URL, is 431 plain text and the connection is closed; the server stays healthy', async () => {
      const bigHeader = await rawHttp(server.httpPort, `GET /health_check HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20 * 1024)}\r\n\r\n`);
      assert.equal(bigHeader.status, 431, bigHeader.raw.slice(0, 300));
      assert.ok(bigHeader.headerLines.some((l) => l.toLowerCase() === `content-type: ${TEXT}`), bigHeader.raw);
      assert.ok(bigHeader.closed, 'the server closes the connection after a 431');

      const manyHeaders = Array.from({ length: 2500 }, (_, i) => `X-H${i}: v`).join('\r\n');
      const many = await rawHttp(server.httpPort, `GET /health_check HTTP/1.1\r\nHost: x\r\n${manyHeaders}\r\n\r\n`);
      assert.equal(many.status, 431, many.raw.slice(0, 300));

      const bigUrl = await rawHttp(server.httpPort, `GET /api/mails?limit=1&offset=0&x=${'u'.repeat(20 * 1024)} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      // The request line counts against the same 16 KiB header limit as the headers.
      assert.equal(bigUrl.status, 431, `20 KB URL -> ${bigUrl.status}`);
      const bigPath = await rawHttp(server.httpPort, `GET /api/mail/${'p'.repeat(20 * 1024)} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      assert.equal(bigPath.status, 431, `20 KB path -> ${bigPath.status}`);

      // Just under the limit is served normally on the same server.
      const near = await rawHttp(server.httpPort, `GET /health_check HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(12 * 1024)}\r\nConnection: close\r\n\r\n`);
      assert.equal(near.status, 200);

      const health = await http('/health_check');
      assert.equal(health.status, 200);
      assert.equal(health.json.status, 'ok');
      // Everything still works end to end after the abuse.
      const { address, jwt } = await createAddress(server);
      await sendMail(server.smtpPort, { to: [address], message: message({ Subject: 'after' }, 'fine') });
      assert.equal((await http('/api/mails?limit=1&offset=0', { jwt })).json.count, 1);
      assert.equal(DOMAIN, address.split('@')[1]);
    });
  });
});
