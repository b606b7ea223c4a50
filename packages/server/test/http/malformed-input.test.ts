// Garbage in never gives a 5xx or a crash: every error is a short text/plain
// sentence without internals (docs/api.md "Conventions"; docs/decisions.md "Errors").
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { pino } from 'pino';
import fc from 'fast-check';
import { client, CookieJar, createAddress, message, sendMail, startTestServer, type HttpResult, type TestServer } from '../helpers/harness.js';

/** A stack frame ("at fn (file.js:1:2)", "at file:///x.js:1:2") or an internal error name. */
const INTERNALS_RE = /\bat (?:async )?\S+ \(|\bat \S+:\d+:\d+|\.[cm]?[jt]s:\d+:\d+|\bError:|\b(?:Type|Range|Syntax|Reference)Error\b|node_modules/;

interface Reply {
  status: number;
  contentType: string;
  text: string;
}

const fromHttp = (res: HttpResult): Reply => ({ status: res.status, contentType: res.headers.get('content-type') ?? '', text: res.text });

/** Status below 500; an error is text/plain with no stack frame and no internal error text. */
function assertSafe(res: Reply | HttpResult, context: string): void {
  const r = 'contentType' in res ? res : fromHttp(res);
  assert.ok(r.status < 500, `${context}: ${r.status} ${r.text}`);
  if (r.status >= 400) {
    assert.match(r.contentType, /^text\/plain/, `${context}: ${r.status} ${r.contentType} ${r.text}`);
    assert.doesNotMatch(r.text, INTERNALS_RE, `${context}: ${r.text}`);
    assert.ok(r.text.length > 0 && r.text.length < 500, `${context}: a short sentence, got ${r.text.length} chars`);
  }
}

/** One HTTP/1.1 request written byte for byte on a socket, so nothing is normalised or refused client-side. */
function rawHttp(port: number, request: Buffer): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error('no HTTP reply within 5 s'));
    }, 5000);
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('latin1');
      const m = /^HTTP\/1\.[01] (\d{3})[^\r\n]*\r\n([\s\S]*?)\r\n\r\n([\s\S]*)$/.exec(text);
      if (!m) return reject(new Error(`not an HTTP reply: ${JSON.stringify(text.slice(0, 200))}`));
      const contentType = /^content-type:\s*([^\r\n]*)/im.exec(m[2]!)?.[1] ?? '';
      resolve({ status: Number(m[1]), contentType, text: Buffer.from(m[3]!, 'latin1').toString('utf8') });
    });
    socket.write(request);
  });
}

/**
 * What Node's HTTP parser makes of `bytes` as the rest of an Authorization header line
 * (followed by CRLF CRLF): 400 when a control character other than TAB is in the value,
 * or a CRLF inside it starts a line that is neither the end of the headers nor a header;
 * otherwise the request reaches the route, whose answer to a bad token is 401.
 */
function headerValueStatus(bytes: Buffer): number {
  // eslint-disable-next-line no-control-regex
  const CTL = /[\x00-\x08\x0a-\x1f\x7f]/;
  const [value, ...lines] = bytes.toString('latin1').split('\r\n');
  if (CTL.test(value!)) return 400;
  for (const line of lines) {
    if (line === '') return 401; // the end of the headers: what follows is not this request
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+:/.test(line) || CTL.test(line)) return 400;
  }
  return 401;
}

const GARBAGE_JSON = ['{', 'nul', '[]', '"x"', '123', 'null', 'true', '{"name":', '{"name":"a",}', "{'name':'a'}", '\u0000', '{"a":1}{"b":2}', 'NaN', '[1,2', '"\\ud800"'];
/** Read as JSON all the same: RFC 8259 §8.1 lets a parser ignore a BOM, and the charset parameter is not for JSON. */
const TOLERATED = [['application/json', '\ufeff{}'], ['application/json; charset=utf-16', '{}'], ['application/json; charset=utf-8', '{}']];

describe('malformed input never gives a 5xx', () => {
  let server: TestServer;
  let api: ReturnType<typeof client>;
  let jwt: string;
  let uuid: string;
  /** A browser session holding one address, so switch_address gets past the cookie check. */
  const jar = new CookieJar();
  before(async () => {
    server = await startTestServer();
    api = client(server);
    const created = await api('/api/new_address', { body: { name: 'fuzz-owner' }, jar });
    jwt = created.json.jwt;
    await sendMail(server.smtpPort, {
      to: [created.json.address],
      message: message({ Subject: 'target', 'Content-Type': 'multipart/mixed; boundary="b"', 'MIME-Version': '1.0' }, '--b\r\nContent-Type: text/plain\r\n\r\nx\r\n--b\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment; filename="a"\r\n\r\nabc\r\n--b--\r\n'),
    });
    uuid = (await api('/api/mails?limit=1&offset=0', { jwt })).json.results[0].uuid;
  });
  after(() => server.close());

  for (const path of ['/api/new_address', '/api/switch_address']) {
    describe(`POST ${path}`, () => {
      const post = (body: string, headers: Record<string, string> = {}) => api(path, { method: 'POST', body, headers, jar });

      it('garbage JSON: 400 text/plain', async () => {
        for (const body of GARBAGE_JSON) {
          const res = await post(body);
          assertSafe(res, JSON.stringify(body));
          assert.equal(res.status, 400, `${JSON.stringify(body)}: ${res.text}`);
        }
      });

      it('a text/plain body is 400 (read as a string, not the object the route takes); any other non-JSON type is 415', async () => {
        for (const [type, body, status] of [
          ['text/plain', '{"name":"x"}', 400],
          ['text/plain', 'hello', 400],
          ['application/x-www-form-urlencoded', 'name=x', 415],
          ['multipart/form-data; boundary=x', '--x--', 415],
          ['application/octet-stream', '\u0000\u0001', 415],
          ['garbage', '{}', 415],
        ] as const) {
          const res = await post(body, { 'content-type': type });
          assertSafe(res, `${type} ${body}`);
          assert.equal(res.status, status, `${type}: ${res.status} ${res.text}`);
        }
      });

      it('an empty body with Content-Type: application/json is no body, not malformed JSON', async () => {
        const res = await post('', { 'content-type': 'application/json' });
        assertSafe(res, 'empty');
        // new_address takes no body as {}; switch_address says what it lacks.
        if (path === '/api/new_address') assert.equal(res.status, 200, res.text);
        else assert.deepEqual([res.status, res.text], [400, 'Invalid request: body must be object.']);
      });

      it('a BOM or a charset parameter: the body is read as JSON all the same', async () => {
        for (const [type, body] of TOLERATED) {
          const res = await post(body!, { 'content-type': type! });
          assertSafe(res, `${type} ${JSON.stringify(body)}`);
          // {} creates a random address; switch_address says what {} lacks, so it was parsed.
          if (path === '/api/new_address') assert.equal(res.status, 200, `${type}: ${res.text}`);
          else assert.deepEqual([res.status, res.text], [400, "Invalid request: body must have required property 'address'."], type);
        }
      });

      it('wrong types for the fields', async () => {
        for (const body of [{ name: 5 }, { name: {} }, { name: [] }, { name: null }, { name: true }, { domain: true }, { domain: {} }, { cf_token: [1] }, { address: 5 }, { address: {} }, { address: null }, { address: [] }]) {
          const res = await post(JSON.stringify(body));
          assertSafe(res, JSON.stringify(body));
          const [field] = Object.keys(body) as [string];
          // new_address ignores fields it does not take (address); switch_address takes only address.
          const expected =
            path === '/api/new_address'
              ? field === 'address'
                ? 200
                : `Invalid request: body/${field} must be string.`
              : field === 'address'
                ? 'Invalid request: body/address must be string.'
                : "Invalid request: body must have required property 'address'.";
          if (expected === 200) assert.equal(res.status, 200, `${JSON.stringify(body)}: ${res.text}`);
          else assert.deepEqual([res.status, res.text], [400, expected], JSON.stringify(body));
        }
      });

      it('a huge name: 60 KB is 400, 100 KB is over the 64 KB body limit (413)', async () => {
        const field = path === '/api/new_address' ? 'name' : 'address';
        const mid = await post(JSON.stringify({ [field]: 'a'.repeat(60 * 1024) }));
        assertSafe(mid, '60 KB');
        assert.equal(mid.status, 400);
        const huge = await post(JSON.stringify({ [field]: 'a'.repeat(100 * 1024) }));
        assertSafe(huge, '100 KB');
        assert.equal(huge.status, 413);
      });

      it('a body over 64 KB is 413', async () => {
        const res = await post(JSON.stringify({ padding: 'x'.repeat(64 * 1024) }));
        assertSafe(res, 'body > 64 KB');
        assert.equal(res.status, 413);
      });

      it('deeply nested JSON: parsed, then judged like any other body', async () => {
        const newAddress = path === '/api/new_address';
        for (const [body, status] of [
          ['['.repeat(30000) + ']'.repeat(30000), 400],
          // An unknown field, however deep, is ignored by new_address.
          ['{"a":'.repeat(10000) + '1' + '}'.repeat(10000), newAddress ? 200 : 400],
          [`{"name":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}`, 400],
        ] as const) {
          const res = await post(body);
          assertSafe(res, `nested ${body.slice(0, 12)}…`);
          assert.equal(res.status, status, `nested ${body.slice(0, 12)}…: ${res.text}`);
        }
      });

      it('__proto__ and constructor.prototype keys are refused and pollute nothing', async () => {
        for (const body of [
          '{"__proto__": {"polluted": "yes", "name": "proto"}}',
          '{"name": "ok", "__proto__": {"polluted": "yes"}}',
          '{"constructor": {"prototype": {"polluted": "yes"}}}',
          '{"name": {"__proto__": {"polluted": "yes"}}}',
        ]) {
          const res = await post(body);
          assertSafe(res, body);
          assert.equal(res.status, 400, `${body}: ${res.text}`);
        }
        assert.equal((Object.prototype as Record<string, unknown>)['polluted'], undefined);
      });
    });
  }

  describe('GET /api/mails query strings', () => {
    it('odd numbers, repeats and percent garbage: 400 or 200, never 5xx', async () => {
      const cases: [string, number | undefined][] = [
        ['limit=1e3&offset=0', 400],
        // A huge offset is an integer past the end: an empty page, not a database error.
        ['limit=10&offset=99999999999999999999', 200],
        ['limit=10&offset=9007199254740993', 200],
        // docs/decisions.md: integers only, "anything else is 400" — not JS number syntax.
        ['limit=10&offset=1e20', 400],
        ['limit=10&offset=1e308', 400],
        ['limit=1e1&offset=0', 400],
        ['limit=10.0&offset=0', 400],
        ['limit=+10&offset=0', 400],
        ['limit=%2010&offset=0', 400],
        ['limit=10%20&offset=0', 400],
        ['limit=10&offset=Infinity', 400],
        ['limit=Infinity&offset=0', 400],
        ['limit=10&offset=' + '9'.repeat(400), 400],
        ['limit=10&offset=NaN', 400],
        ['limit=1&limit=2&offset=0', 400],
        ['limit=10&offset=0&offset=1', 400],
        ['limit=%ff%fe&offset=0', 400],
        ['limit=10&offset=%ff%fe', 400],
        ['%ff%fe=1&limit=10&offset=0', 200],
        ['limit=%00&offset=0', 400],
        ['limit=0x10&offset=0', 400],
        ['limit=10&offset=0x10', 400],
        ['limit=%E2%80%8B10&offset=0', 400],
        ['limit=１０&offset=0', 400],
        ['limit[]=1&offset=0', 400],
        ['limit[a]=1&offset=0', 400],
        ['limit=10&offset=0&' + 'x=1&'.repeat(2000), 200],
        ['limit=' + '9'.repeat(5000) + '&offset=0', 400],
        ['&&&==&=', 400],
      ];
      for (const [query, expected] of cases) {
        const res = await api(`/api/mails?${query}`, { jwt });
        assertSafe(res, query.slice(0, 80));
        if (expected !== undefined) assert.equal(res.status, expected, `${query.slice(0, 80)}: ${res.text}`);
        if (res.status === 200) assert.equal(res.json.count, 1, 'count is the total at every offset');
        if (res.status === 200 && /offset=9{5}/.test(query)) assert.deepEqual(res.json.results, []);
      }
    });
  });

  describe('mail paths with a garbage uuid', () => {
    it('a long uuid, NUL, path traversal and garbage: 404 (not a valid request target: 400), text/plain', async () => {
      for (const segment of ['a'.repeat(300), 'a'.repeat(65), '%00', `${uuid}%00`, '%ff%fe', '%', '%2e%2e%2f%2e%2e%2fetc%2fpasswd', "1' OR '1'='1", '*', '%20', '..%5c..%5cwin.ini']) {
        for (const [method, path] of [
          ['GET', `/api/mail/${segment}`],
          ['DELETE', `/api/mails/${segment}`],
          ['GET', `/api/attachment/${segment}/0`],
          ['GET', `/api/attachment/${uuid}/${segment}`],
        ] as const) {
          const res = await rawHttp(server.httpPort, Buffer.from(`${method} ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${jwt}\r\nConnection: close\r\n\r\n`, 'latin1'));
          assertSafe(res, `${method} ${path.slice(0, 80)}`);
          // Not a URL at all (bad percent-escapes, a raw space in the request line): 400.
          const expected = segment === '%ff%fe' || segment === '%' || segment.includes(' ') ? 400 : 404;
          assert.equal(res.status, expected, `${method} ${path.slice(0, 80)}: ${res.status} ${res.text}`);
        }
      }
    });

    it('../../etc/passwd, sent without client-side normalisation, reaches no file', async () => {
      for (const path of ['/api/mail/../../etc/passwd', '/api/mail/..%2f..%2fetc%2fpasswd', '/../../../../etc/passwd', '/api/attachment/../../../etc/passwd']) {
        const res = await rawHttp(server.httpPort, Buffer.from(`GET ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${jwt}\r\nConnection: close\r\n\r\n`));
        assertSafe(res, path);
        // Matched as routes (no route, or no such mail), never as files.
        assert.equal(res.status, 404, `${path}: ${res.status} ${res.text}`);
        assert.doesNotMatch(res.text, /root:/);
      }
    });
  });

  describe('Authorization header garbage', () => {
    it('random bytes in the header: 401, or 400 for bytes HTTP forbids, always text/plain', async () => {
      for (let i = 0; i < 50; i++) {
        // Pseudo-random but the same on every run, so the expected status is fixed.
        const bytes = Buffer.concat(Array.from({ length: 10 }, (_, k) => createHash('sha256').update(`auth ${i} ${k}`).digest())).subarray(0, 1 + (i % 40) * 8);
        const req = Buffer.concat([Buffer.from('GET /api/settings HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: '), bytes, Buffer.from('\r\n\r\n')]);
        const res = await rawHttp(server.httpPort, req);
        assertSafe(res, bytes.toString('hex'));
        assert.equal(res.status, headerValueStatus(bytes), bytes.toString('hex'));
      }
    });

    it('bytes HTTP allows (latin1, tabs) after "Bearer ": 401', async () => {
      for (const value of ['Bearer \xff\xfe\xfd', 'Bearer a.b.c\t', 'Bearer \x80.\x80.\x80', `Bearer ${'a'.repeat(8000)}.b.c`, `Bearer ${jwt}\xff`]) {
        const res = await api('/api/settings', { headers: { authorization: value } });
        assertSafe(res, value.slice(0, 40));
        assert.equal(res.status, 401);
      }
    });

    it('an oversized header block is refused in text/plain (431)', async () => {
      const res = await rawHttp(server.httpPort, Buffer.from(`GET /api/settings HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer ${'a'.repeat(100 * 1024)}\r\n\r\n`));
      assertSafe(res, 'header overflow');
      assert.equal(res.status, 431);
    });

    it('a request line that is not HTTP: 400 text/plain', async () => {
      const res = await rawHttp(server.httpPort, Buffer.from('\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03 garbage\r\n\r\n', 'latin1'));
      assertSafe(res, 'TLS hello on plain HTTP');
      assert.equal(res.status, 400);
    });
  });

  describe('properties (fast-check)', () => {
    const numRuns = 200;
    /** Characters Node's HTTP client lets into a header value. */
    const headerChar = fc.oneof(fc.constantFrom('\t', ' ', 'B', 'e', 'a', 'r', '.', '-', '_'), fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)), fc.integer({ min: 0x80, max: 0xff }).map((c) => String.fromCharCode(c)));

    it('any JSON value as the body of POST /api/new_address', async () => {
      await fc.assert(
        fc.asyncProperty(fc.jsonValue(), async (value) => {
          const res = await api('/api/new_address', { method: 'POST', body: JSON.stringify(value) });
          assertSafe(res, JSON.stringify(value).slice(0, 200));
          // Anything but an object is 400; an object is judged by its fields (200, 400, or 409 for a taken name).
          if (typeof value !== 'object' || value === null || Array.isArray(value)) assert.equal(res.status, 400, JSON.stringify(value).slice(0, 200));
          else assert.ok([200, 400, 409].includes(res.status), `${JSON.stringify(value).slice(0, 200)}: ${res.status} ${res.text}`);
          if (res.status === 200) assert.match(res.json.address, /@/);
        }),
        { numRuns },
      );
    });

    it('any object of string fields as a create-address request', async () => {
      await fc.assert(
        fc.asyncProperty(fc.record({ name: fc.string({ unit: 'binary' }), domain: fc.option(fc.string(), { nil: undefined }) }, { requiredKeys: [] }), async (body) => {
          const res = await api('/api/new_address', { body });
          assertSafe(res, JSON.stringify(body));
          assert.ok([200, 400, 409].includes(res.status), `${JSON.stringify(body)}: ${res.status}`);
        }),
        { numRuns },
      );
    });

    it('any JSON value as the body of POST /api/switch_address, with a live session', async () => {
      await fc.assert(
        fc.asyncProperty(fc.jsonValue(), async (value) => {
          const res = await api('/api/switch_address', { method: 'POST', body: JSON.stringify(value), jar });
          assertSafe(res, JSON.stringify(value).slice(0, 200));
          // A string address (at most 320 characters) that is not one of the session's is 403 (fast-check
          // will not guess the one it has); any other body is 400. Bodies with __proto__ or constructor
          // keys are refused by the JSON parser or not, depending on their shape (tested above).
          const text = JSON.stringify(value);
          if (!/"(?:__proto__|constructor)"/.test(text)) {
            const address = value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>)['address'] : undefined;
            const expected = typeof address === 'string' && [...address].length <= 320 ? 403 : 400;
            assert.equal(res.status, expected, `${text.slice(0, 200)}: ${res.text}`);
          }
        }),
        { numRuns },
      );
      assert.equal((await api('/api/session/addresses', { jar })).status, 200, 'the session survived');
    });

    it('any strings as limit and offset', async () => {
      await fc.assert(
        fc.asyncProperty(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary' }), async (limit, offset) => {
          const res = await api(`/api/mails?limit=${encodeURIComponent(limit)}&offset=${encodeURIComponent(offset)}`, { jwt });
          assertSafe(res, `limit=${JSON.stringify(limit)} offset=${JSON.stringify(offset)}`);
          assert.ok(res.status === 200 || res.status === 400, `${res.status}`);
        }),
        { numRuns },
      );
    });

    it('any integers as limit and offset: 200 exactly when 1 <= limit <= 100 and offset >= 0', async () => {
      await fc.assert(
        fc.asyncProperty(fc.oneof(fc.integer({ min: -5, max: 105 }), fc.integer()), fc.oneof(fc.integer({ min: -3, max: 3 }), fc.maxSafeInteger()), async (limit, offset) => {
          const res = await api(`/api/mails?limit=${limit}&offset=${offset}`, { jwt });
          assertSafe(res, `limit=${limit} offset=${offset}`);
          assert.equal(res.status, limit >= 1 && limit <= 100 && offset >= 0 ? 200 : 400, `limit=${limit} offset=${offset}: ${res.text}`);
          if (res.status === 200) assert.equal(res.json.count, 1);
        }),
        { numRuns },
      );
    });

    it('any string as a mail uuid: 404 or 400, never someone else’s mail', async () => {
      await fc.assert(
        fc.asyncProperty(fc.string({ unit: 'binary', maxLength: 300 }), fc.constantFrom('GET /api/mail/', 'DELETE /api/mails/', 'GET /api/attachment/'), async (segment, route) => {
          const [method, prefix] = route.split(' ') as [string, string];
          const suffix = prefix.startsWith('/api/attachment/') ? '/0' : '';
          const res = await api(`${prefix}${encodeURIComponent(segment)}${suffix}`, { method, jwt });
          assertSafe(res, `${route}${JSON.stringify(segment)}`);
          if (segment !== uuid) assert.equal(res.status, 404, `${route}${JSON.stringify(segment)}: ${res.status}`);
        }),
        { numRuns },
      );
      assert.equal((await api(`/api/mail/${uuid}`, { jwt })).status, 200, 'the real mail is untouched');
    });

    it('any header-safe string as the Authorization header: 401', async () => {
      await fc.assert(
        fc.asyncProperty(fc.string({ unit: headerChar, maxLength: 200 }), async (value) => {
          const res = await api('/api/settings', { headers: { authorization: value } });
          assertSafe(res, JSON.stringify(value));
          assert.equal(res.status, 401);
        }),
        { numRuns },
      );
    });

    it('any bytes as the Authorization header on the wire: 400 or 401 in text/plain', async () => {
      await fc.assert(
        fc.asyncProperty(fc.uint8Array({ minLength: 0, maxLength: 120 }), async (bytes) => {
          const req = Buffer.concat([Buffer.from('GET /api/mails?limit=1&offset=0 HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer '), Buffer.from(bytes), Buffer.from('\r\n\r\n')]);
          const res = await rawHttp(server.httpPort, req);
          assertSafe(res, Buffer.from(bytes).toString('hex'));
          assert.equal(res.status, headerValueStatus(Buffer.from(bytes)), Buffer.from(bytes).toString('hex'));
        }),
        { numRuns: 100 },
      );
    });

    it('any text as a text/plain body to new_address', async () => {
      await fc.assert(
        fc.asyncProperty(fc.string({ unit: 'binary', maxLength: 500 }), async (text) => {
          const res = await api('/api/new_address', { method: 'POST', body: text, headers: { 'content-type': 'text/plain' } });
          assertSafe(res, JSON.stringify(text));
          // Read as a string, which is not the object the route takes.
          assert.equal(res.status, 400, `${JSON.stringify(text)}: ${res.text}`);
        }),
        { numRuns },
      );
    });
  });

  it('the owner can still read the inbox, and /health_check is 200', async () => {
    assert.equal((await api('/api/mails?limit=10&offset=0', { jwt })).json.count, 1);
    const owner = await createAddress(server, {});
    assert.equal((await api('/api/settings', { jwt: owner.jwt })).status, 200);
    const health = await api('/health_check');
    assert.equal(health.status, 200);
    assert.deepEqual(health.json, { status: 'ok', version: '1.0.0', storage: 'ok' });
  });
});

describe('routes without a body, called with Content-Type: application/json and nothing in it', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.close());

  it('are answered as without the header (many HTTP wrappers send it on every request)', async () => {
    const api = client(server);
    const jar = new CookieJar();
    const created = await api('/api/new_address', { method: 'POST', body: '', headers: { 'content-type': 'application/json' }, jar });
    assert.equal(created.status, 200, created.text);
    const { jwt, address } = created.json as { jwt: string; address: string };
    for (const subject of ['one', 'two']) await sendMail(server.smtpPort, { to: [address], message: message({ Subject: subject }, 'x') });
    const [first] = (await api('/api/mails?limit=10&offset=0', { jwt })).json.results as { uuid: string }[];
    assert.equal((await api('/api/webhook', { method: 'PUT', jwt, body: { url: 'https://1.1.1.1/hook' } })).status, 200);
    const empty = { body: '', headers: { 'content-type': 'application/json' } };
    for (const [method, path] of [
      ['DELETE', `/api/mails/${first!.uuid}`],
      ['DELETE', '/api/webhook'],
      ['DELETE', '/api/clear_inbox'],
      ['POST', '/api/logout'],
      ['DELETE', '/api/delete_address'],
    ] as const) {
      const res = await api(path, { method, jwt: path === '/api/logout' ? undefined : jwt, jar, ...empty });
      assert.deepEqual([res.status, res.json], [200, { success: true }], `${method} ${path}: ${res.text}`);
    }
    assert.equal((await api('/api/settings', { jwt })).status, 401, 'the address was deleted');
  });
});

describe('requests no route answers, and bodies that are not plain JSON', () => {
  const lines: { level: number; msg: string }[] = [];
  let server: TestServer;
  before(async () => {
    server = await startTestServer({}, undefined, pino({ level: 'info' }, { write: (s: string) => void lines.push(JSON.parse(s) as { level: number; msg: string }) }));
  });
  after(() => server.close());

  /** One raw HTTP request; the answer as text, when the server closes the connection. */
  const raw = (text: string) =>
    new Promise<string>((resolve, reject) => {
      const socket = connect(server.httpPort, '127.0.0.1');
      let answer = '';
      socket.on('data', (d) => (answer += d.toString('latin1')));
      socket.on('error', reject);
      socket.on('close', () => resolve(answer));
      socket.write(text);
    });

  it('an Expect other than 100-continue: 417 in plain text; CONNECT: 405 in plain text', async () => {
    const expect = await raw('POST /api/new_address HTTP/1.1\r\nHost: x\r\nExpect: foo\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}');
    assert.match(expect, /^HTTP\/1\.1 417 /);
    assert.match(expect, /\r\ncontent-type: text\/plain; charset=utf-8\r\n/i);
    assert.ok(expect.endsWith('\r\n\r\nOnly "Expect: 100-continue" is understood.'), expect);
    const tunnel = await raw('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
    assert.match(tunnel, /^HTTP\/1\.1 405 /);
    assert.ok(tunnel.endsWith('\r\n\r\nCONNECT is not supported here.'), tunnel);
  });

  it('a compressed JSON body is 415; valid JSON with a __proto__ key is a 400 that says so', async () => {
    const api = client(server);
    const gz = await api('/api/new_address', { method: 'POST', body: gzipSync('{}').toString('latin1'), headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' } });
    assert.deepEqual([gz.status, gz.text], [415, 'Content-Encoding is not supported; send the body uncompressed.']);
    const identity = await api('/api/new_address', { method: 'POST', body: '{}', headers: { 'content-type': 'application/json', 'content-encoding': 'identity' } });
    assert.equal(identity.status, 200, identity.text);
    for (const body of ['{"__proto__":{"admin":true}}', '{"constructor":{"prototype":{"admin":true}}}']) {
      const res = await api('/api/new_address', { method: 'POST', body, headers: { 'content-type': 'application/json' } });
      assert.deepEqual([res.status, res.text], [400, 'The body has a "__proto__" or "constructor.prototype" key, which is refused.'], body);
    }
    const broken = await api('/api/new_address', { method: 'POST', body: '{"name":', headers: { 'content-type': 'application/json' } });
    assert.equal(broken.status, 400);
    assert.match(broken.text, /not valid JSON/);
  });

  it('an upload the client cuts short is logged as such, not as a server error', async () => {
    const before = lines.length;
    await new Promise<void>((resolve) => {
      const socket = connect(server.httpPort, '127.0.0.1');
      socket.on('error', () => undefined);
      socket.write('POST /api/new_address HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"name":"cut');
      setTimeout(() => {
        socket.destroy();
        resolve();
      }, 200);
    });
    // The server sees the reset when it reads next.
    await new Promise((r) => setTimeout(r, 300));
    const logged = lines.slice(before);
    assert.deepEqual(
      logged.filter((l) => l.level >= 50),
      [],
      'no error-level line',
    );
    assert.ok(logged.some((l) => l.msg === 'client went away during the request'), JSON.stringify(logged));
  });
});
