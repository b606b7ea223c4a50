// Reliability — Fuzz (issue "Reliability — Fuzz"): fast-check properties for name
// validation, header parsing and the API inputs, and mutated real messages
// (truncated, broken boundaries, bad encodings, huge headers, deep nesting,
// pathological HTML) through a real SMTP session: never a crash, never a 5xx,
// never a stuck connection, and whatever got a 250 is readable.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { FormatRegistry } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { MailMetadata } from '@temp-inbox/api';
import { AppError } from '../../../src/domain/errors.js';
import { normalizeName, type NamePolicy } from '../../../src/domain/names.js';
import { extractCodes, extractLinks, htmlToText, makePreview } from '../../../src/mail/parse/extract.js';
import PostalMime from 'postal-mime';
import { buildMetadata, createMessageParser, PARSE_OPTIONS, parseMessage } from '../../../src/mail/parse/parse.js';
import { client, createAddress, DOMAIN, SmtpClient, startTestServer, type HttpResult, type TestServer } from '../../helpers/harness.js';
import { runsText, timedRuns } from '../../helpers/timing.js';

// A failing property reports the assertion message, not only the counterexample.
fc.configureGlobal({ includeErrorInReport: true });
/** Run counts are modest by default; FUZZ_FACTOR=20 fuzzes twenty times harder. */
const FUZZ_FACTOR = Number(process.env['FUZZ_FACTOR'] ?? 1);
const runs = (n: number) => Math.max(1, Math.round(n * FUZZ_FACTOR));

// TypeBox checks `format` only for registered formats.
if (!FormatRegistry.Has('date-time')) FormatRegistry.Set('date-time', (v) => !Number.isNaN(Date.parse(v)) && new Date(v).toISOString() === v);
if (!FormatRegistry.Has('uuid')) FormatRegistry.Set('uuid', (v) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(v));

const DEFAULT_BLOCKLIST = ['postmaster', 'abuse', 'admin', 'root', 'hostmaster', 'webmaster', 'noreply'];

/** docs/decisions.md "Names", written out by hand (not with the implementation's regex). */
function designName(requested: string): string | undefined {
  const name = requested.toLowerCase();
  if (name.length < 1 || name.length > 64) return undefined;
  const alnum = (c: string) => (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
  if (!alnum(name[0]!) || !alnum(name[name.length - 1]!)) return undefined;
  for (const c of name) if (!alnum(c) && c !== '.' && c !== '_' && c !== '-') return undefined;
  return name.includes('..') ? undefined : name;
}

const nameChars = fc.constantFrom(...'abcxyzABCXYZ0189._-'.split(''), ' ', '@', '+', '/', '\r', '\n', '"', ';', '<', '>', '%', '\u0000', 'é', 'İ', 'ß', '\u212a', '\u017f');
/** Names near the grammar (mostly valid characters), arbitrary text, and injection attempts. */
const nameArb = fc.oneof(
  fc.string({ unit: fc.constantFrom(...'abcdefxyz0123456789'.split('')), minLength: 1, maxLength: 70 }),
  fc.string({ unit: fc.constantFrom(...'abzAZ09._-'.split('')), maxLength: 70 }),
  fc.string({ unit: nameChars, maxLength: 70 }),
  fc.string({ maxLength: 80 }),
  fc.string({ unit: 'binary', maxLength: 80 }),
  fc.tuple(fc.stringMatching(/^[a-z0-9]{1,10}$/), fc.constantFrom('\r\nSet-Cookie: x=1', '%0d%0aX-Injected: 1', '"', ';', '<script>alert(1)</script>', '\u0000', '..', '\t'), fc.stringMatching(/^[a-z0-9]{0,10}$/)).map(([a, b, c]) => a + b + c),
);

const isText = (res: HttpResult) => res.headers.get('content-type') === 'text/plain; charset=utf-8';
const isJson = (res: HttpResult) => (res.headers.get('content-type') ?? '').startsWith('application/json');

/** The response contract of every endpoint: no 5xx; JSON on success; errors plain text. */
function assertWellFormed(res: HttpResult, what: string, opts: { binary?: boolean } = {}): void {
  assert.ok(res.status < 500, `${what}: ${res.status} ${res.text}`);
  if (res.status >= 400) assert.ok(isText(res), `${what}: error ${res.status} is ${res.headers.get('content-type')}`);
  else if (res.status === 200 && !opts.binary) assert.ok(isJson(res) && res.json !== undefined, `${what}: 200 is ${res.headers.get('content-type')}`);
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Metadata must satisfy the published schema, survive JSON, and be internally consistent. */
function assertMetadata(meta: unknown, rawSize: number): void {
  if (!Value.Check(MailMetadata, meta)) {
    const first = [...Value.Errors(MailMetadata, meta)][0];
    assert.fail(`metadata does not match the schema at ${first?.path}: ${first?.message} (${JSON.stringify(meta).slice(0, 300)})`);
  }
  assert.deepStrictEqual(JSON.parse(JSON.stringify(meta)), meta, 'metadata round-trips through JSON');
  // Every string is well-formed UTF-16 (no half of a surrogate pair cut off by a truncation).
  const strings = (v: unknown): string[] => (typeof v === 'string' ? [v] : v && typeof v === 'object' ? Object.values(v).flatMap(strings) : []);
  for (const str of strings(meta)) assert.ok(!LONE_SURROGATE.test(str), `lone surrogate in ${JSON.stringify(str)}`);
  assert.equal(meta.size, rawSize);
  assert.ok(meta.preview.length <= 201, 'preview is about 200 characters at most');
  assert.ok(meta.codes.length <= 10);
  assert.ok(meta.links.length <= 50);
  for (const l of meta.links) assert.ok(/^https?:\/\//i.test(l) && URL.canParse(l), `link ${l}`);
  meta.attachments.forEach((a, i) => assert.equal(a.id, String(i)));
}

// ---------------------------------------------------------------------------
// Realistic messages and their mutations.

const CRLF = '\r\n';
const lines = (...l: string[]) => l.join(CRLF) + CRLF;
const b64 = (buf: Buffer) => buf.toString('base64').replace(/.{1,76}/g, '$&\r\n');
/** Deterministic pseudo-random bytes (a PDF-ish attachment). */
const bytes = (n: number, seed: string) => {
  const out: Buffer[] = [];
  for (let i = 0; out.length * 32 < n; i++) out.push(createHash('sha256').update(`${seed}${i}`).digest());
  return Buffer.concat(out).subarray(0, n);
};

const ATTACHMENT = Buffer.concat([Buffer.from('%PDF-1.4\n'), bytes(3000, 'pdf')]);

/** Real-world shapes, as latin1 strings (one character per byte). */
const BASES: Record<string, string> = {
  alternative: lines(
    'From: "Acme Accounts" <no-reply@acme.example>',
    'To: user@temp-inbox.localhost',
    'Subject: Confirm your account',
    'Date: Tue, 02 Jun 2026 10:00:00 +0000',
    'Message-ID: <alt-1@acme.example>',
    'MIME-Version: 1.0',
    'Content-Type: multipart/alternative; boundary="ALT-b0undary_1"',
    '',
    'This is a multi-part message in MIME format.',
    '--ALT-b0undary_1',
    'Content-Type: text/plain; charset=utf-8',
    'Content-Transfer-Encoding: 7bit',
    '',
    'Your code is 482915. Or open https://acme.example/verify?t=abc&u=1',
    '--ALT-b0undary_1',
    'Content-Type: text/html; charset=utf-8',
    'Content-Transfer-Encoding: quoted-printable',
    '',
    '<html><head><style>p{color:red}</style></head><body><p>Your code is <b>482915</b></p>',
    '<a href=3D"https://acme.example/verify?t=3Dabc&amp;u=3D1">Verify</a></body></html>',
    '--ALT-b0undary_1--',
  ),
  mixed: lines(
    'From: Billing <billing@shop.example>',
    'To: user@temp-inbox.localhost',
    'Subject: Your invoice',
    'Date: Wed, 03 Jun 2026 08:30:00 +0200',
    'Message-ID: <mixed-1@shop.example>',
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="==MIXED=="',
    '',
    '--==MIXED==',
    'Content-Type: text/plain; charset=us-ascii',
    '',
    'Invoice attached. Reference 77001.',
    '--==MIXED==',
    'Content-Type: application/pdf; name="invoice.pdf"',
    'Content-Transfer-Encoding: base64',
    "Content-Disposition: attachment; filename*=UTF-8''r%C3%A9sum%C3%A9.pdf",
    '',
    b64(ATTACHMENT).trimEnd(),
    '--==MIXED==',
    'Content-Type: image/png',
    'Content-Transfer-Encoding: base64',
    'Content-Disposition: inline; filename="dot.png"',
    '',
    b64(bytes(200, 'png')).trimEnd(),
    '--==MIXED==--',
  ),
  quotedPrintable: lines(
    'From: =?UTF-8?Q?J=C3=BCrgen_M=C3=BCller?= <jm@example.de>',
    'To: user@temp-inbox.localhost',
    'Subject: Caf=?ISO-8859-1?Q?=E9?= news',
    'Message-ID: <qp-1@example.de>',
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    'Content-Transfer-Encoding: quoted-printable',
    '',
    'Gr=C3=BC=C3=9Fe! This line is long enough that it was wrapped with a so=',
    'ft line break, and it continues here. Caf=C3=A9 cr=C3=A8me =E2=82=AC 5.',
    'Your verification code: 913 204',
    'Trailing spaces are encoded=20',
  ),
  encodedWords: lines(
    `Subject: =?UTF-8?B?${Buffer.from('Grüße aus München 🎉').toString('base64')}?= =?ISO-8859-1?Q?caf=E9?=`,
    `From: =?UTF-8?B?${Buffer.from('Zoë').toString('base64')}?= <zoe@example.org>`,
    'To: "Team, All" <all@example.org>, user@temp-inbox.localhost',
    'Date: Thu, 4 Jun 2026 12:00:00 -0700 (PDT)',
    'Message-ID: <ew-1@example.org>',
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=ISO-8859-1',
    'Content-Transfer-Encoding: 8bit',
    '',
    `Voil\xe0: d\xe9j\xe0 vu. Code 5521 at https://example.org/x.`,
  ),
};

const KINDS = [
  'truncate',
  'drop-boundary',
  'dup-boundary',
  'mangle-boundary',
  'corrupt-base64',
  'corrupt-qp',
  'inject-8bit',
  'invalid-utf8',
  'nul',
  'huge-header',
  'long-line',
  'deep-nesting',
  'bare-lf',
  'bare-cr',
  'no-separator',
  'header-garbage',
  'pathological-html',
] as const;
type Kind = (typeof KINDS)[number];
interface Op {
  kind: Kind;
  /** Where, as a fraction of the message. */
  at: number;
  /** Which variant. */
  n: number;
}

const INVALID_UTF8 = ['\xc3\x28', '\xa0\xa1', '\xe2\x28\xa1', '\xe2\x82', '\xf0\x28\x8c\xbc', '\xf8\xa1\xa1\xa1\xa1', '\xff\xfe\xfd', '\xed\xa0\x80', '\xc0\xaf'];
const GARBAGE_HEADERS = [
  'a line without a colon',
  ': empty name',
  'Bad Header : x',
  'Subject',
  'X-\xe9\xff: 8-bit name',
  'Content-Type: multipart/mixed',
  'Content-Type: text/plain; charset=x-unknown-charset',
  'Content-Transfer-Encoding: x-uuencode',
  'Content-Type: multipart/alternative; boundary=""',
  'From: <<<@@@>>>, "unterminated',
  'Date: 31 Feb 99999 25:61:61 +9999',
  Array.from({ length: 2000 }, (_, i) => `X-Many-${i}: v`).join(CRLF),
];

function insertAt(s: string, at: number, what: string): string {
  const i = Math.min(s.length, Math.floor(at * s.length));
  return s.slice(0, i) + what + s.slice(i);
}

/** Lines matching re, as [start, end-including-line-break]. */
function findLines(s: string, re: RegExp): [number, number][] {
  const out: [number, number][] = [];
  const g = new RegExp(`^(?:${re.source})[^\\r\\n]*(?:\\r\\n|\\n|\\r|$)`, 'gm');
  for (const m of s.matchAll(g)) if (m[0].length) out.push([m.index, m.index + m[0].length]);
  return out;
}

const pick = <T>(list: readonly T[], at: number): T => list[Math.min(list.length - 1, Math.floor(at * list.length))]!;

function mutate(s: string, { kind, at, n }: Op): string {
  switch (kind) {
    case 'truncate':
      return s.slice(0, Math.floor(at * s.length));
    case 'drop-boundary':
    case 'dup-boundary':
    case 'mangle-boundary': {
      const found = findLines(s, /--/);
      if (!found.length) return insertAt(s, at, '--stray-boundary--\r\n');
      const [a, b] = pick(found, at);
      const line = s.slice(a, b);
      if (kind === 'drop-boundary') return s.slice(0, a) + s.slice(b);
      if (kind === 'dup-boundary') return s.slice(0, b) + line + s.slice(b);
      const variants = [line.replace(/--(\r?\n?)$/, '$1'), line.replace(/(\r?\n?)$/, 'x$1'), line.replace(/(\r?\n?)$/, '   \t$1'), line.toUpperCase(), '-' + line];
      return s.slice(0, a) + variants[n % variants.length] + s.slice(b);
    }
    case 'corrupt-base64': {
      const found = findLines(s, /[A-Za-z0-9+/]{16,}={0,2}(?=\r?$)/);
      if (!found.length) return insertAt(s, at, 'Q!!!===x=\r\n');
      const [a, b] = pick(found, at);
      const line = s.slice(a, b).replace(/\r?\n$/, '');
      const mid = Math.floor(line.length / 2);
      const variants = [line.slice(0, mid) + '!*' + line.slice(mid + 2), line.slice(0, mid) + '=' + line.slice(mid), line.slice(0, -1), '====', line + '=====', line.replace(/[A-M]/g, '\xe9')];
      return s.slice(0, a) + variants[n % variants.length] + '\r\n' + s.slice(b);
    }
    case 'corrupt-qp': {
      const variants = ['=ZZ', '=', '=4', '=\xc3', '=0', '=\r', '= \r\n', '=3D=3', '=C3=28'];
      const qp = variants[n % variants.length]!;
      return n % 2 ? insertAt(s, at, qp) : s.replace(/=3D/g, '=3').replace(/=C3=/g, '=C3' + qp);
    }
    case 'inject-8bit':
      return insertAt(s, at, String.fromCharCode(0x80 + (n & 0x7f)).repeat(1 + (n % 16)));
    case 'invalid-utf8':
      return insertAt(s, at, pick(INVALID_UTF8, (n % INVALID_UTF8.length) / INVALID_UTF8.length));
    case 'nul':
      return insertAt(s, at, '\0'.repeat(1 + (n % 4)));
    case 'huge-header': {
      const size = 200 * 1024;
      const variants = [
        `X-Huge: ${'h'.repeat(size)}\r\n`,
        `X-Huge-Folded: ${('f'.repeat(76) + '\r\n ').repeat(Math.ceil(size / 79))}end\r\n`,
        `Subject: ${`=?UTF-8?B?${Buffer.from('Grüße ').toString('base64')}?= `.repeat(Math.ceil(size / 22))}\r\n`,
        `To: ${Array.from({ length: 8000 }, (_, i) => `r${i}@example.com`).join(', ')}\r\n`,
      ];
      return variants[n % variants.length] + s;
    }
    case 'long-line':
      return insertAt(s, at, 'L'.repeat(512 * 1024));
    case 'deep-nesting': {
      let inner = s;
      for (let i = 79; i >= 0; i--) inner = `Content-Type: multipart/mixed; boundary="nest${i}"\r\n\r\n--nest${i}\r\n${inner}\r\n--nest${i}--\r\n`;
      return `Subject: nested 80 deep\r\nMIME-Version: 1.0\r\n${inner}`;
    }
    case 'bare-lf': {
      const i = n % 2 ? Math.floor(at * s.length) : 0;
      return s.slice(0, i) + s.slice(i).replace(/\r\n/g, '\n');
    }
    case 'bare-cr': {
      const i = Math.floor(at * s.length);
      return s.slice(0, i) + s.slice(i).replace(/\r\n/g, '\r');
    }
    case 'no-separator':
      return s.replace(/\r?\n\r?\n/, '\r\n');
    case 'header-garbage':
      return GARBAGE_HEADERS[n % GARBAGE_HEADERS.length] + '\r\n' + s;
    case 'pathological-html': {
      // Inputs that make naive regexes quadratic (unclosed tags, runs of punctuation).
      const variants = [
        ['text/html', '<'.repeat(300_000)],
        ['text/html', '<script '.repeat(40_000)],
        ['text/html', '<br'.repeat(100_000)],
        ['text/html', '<a href="https://x.example/' + '.'.repeat(300_000)],
        ['text/plain', 'https://x.example/' + '.'.repeat(300_000) + 'x'],
        ['text/plain', 'code '.repeat(60_000)],
        ['text/html', '&#x'.repeat(100_000)],
      ] as const;
      const [type, body] = variants[n % variants.length]!;
      return `Subject: pathological\r\nContent-Type: ${type}; charset=utf-8\r\n\r\n${body}\r\n`;
    }
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
/** How the API renders stored bytes (UTF-8 when valid, else latin1). */
function rendered(buf: Buffer): string {
  try {
    return utf8.decode(buf);
  } catch {
    return buf.toString('latin1');
  }
}

// ---------------------------------------------------------------------------

describe('fuzz', { timeout: 180_000 * Math.max(1, FUZZ_FACTOR) }, () => {
  let server: TestServer;
  let http: ReturnType<typeof client>;
  before(async () => {
    server = await startTestServer();
    http = client(server);
  });
  after(() => server.close());

  describe('name validation', () => {
    const policy: NamePolicy = { customNames: true, blocklist: new Set(DEFAULT_BLOCKLIST) };

    it('normalizeName accepts exactly the documented grammar after lower-casing, else throws an AppError', () => {
      fc.assert(
        fc.property(nameArb, (requested) => {
          const expected = designName(requested);
          let got: string | undefined;
          let error: unknown;
          try {
            got = normalizeName(requested, policy);
          } catch (err) {
            error = err;
          }
          if (error !== undefined) {
            assert.ok(error instanceof AppError, `a non-AppError escaped: ${String(error)}`);
            assert.equal(error.code, 'bad_request');
            assert.ok(expected === undefined || policy.blocklist.has(expected), `valid name ${JSON.stringify(requested)} refused`);
          } else {
            assert.equal(got, expected, `${JSON.stringify(requested)} accepted as ${JSON.stringify(got)}`);
            assert.ok(!policy.blocklist.has(got!));
          }
        }),
        { numRuns: runs(3000) },
      );
    });

    it('normalizeName: blocklisted names are refused whatever their case; disabled custom names refuse everything with forbidden', () => {
      fc.assert(
        fc.property(fc.constantFrom(...DEFAULT_BLOCKLIST), fc.array(fc.boolean(), { maxLength: 12 }), (name, upper) => {
          const mixed = [...name].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join('');
          assert.throws(() => normalizeName(mixed, policy), (e: unknown) => e instanceof AppError && e.code === 'bad_request');
        }),
      );
      fc.assert(
        fc.property(nameArb, (name) => {
          assert.throws(() => normalizeName(name, { ...policy, customNames: false }), (e: unknown) => e instanceof AppError && e.code === 'forbidden');
        }),
        { numRuns: runs(300) },
      );
    });

    it('POST /api/new_address with random names: 200 (exactly the lower-cased name), 400 (invalid) or 409 (taken); errors are plain text', async () => {
      const taken = new Set<string>();
      await fc.assert(
        fc.asyncProperty(nameArb, async (name) => {
          const res = await http('/api/new_address', { method: 'POST', body: { name } });
          assertWellFormed(res, `name ${JSON.stringify(name)}`);
          const expected = designName(name);
          if (expected === undefined || policy.blocklist.has(expected)) {
            assert.equal(res.status, 400, `${JSON.stringify(name)} -> ${res.status} ${res.text}`);
          } else if (taken.has(expected)) {
            assert.equal(res.status, 409, `${JSON.stringify(name)} (taken) -> ${res.status}`);
          } else {
            assert.equal(res.status, 200, `${JSON.stringify(name)} -> ${res.status} ${res.text}`);
            assert.equal(res.json.address, `${expected}@${DOMAIN}`);
            taken.add(expected);
          }
        }),
        { numRuns: runs(250) },
      );
    });
  });

  describe('every API input', () => {
    let jwt: string;
    let uuid: string;
    before(async () => {
      ({ jwt } = await createAddress(server, { name: 'api-inputs' }));
      const smtp = await SmtpClient.connect(server.smtpPort);
      for (const cmd of ['EHLO fuzz.test', 'MAIL FROM:<a@example.com>', `RCPT TO:<api-inputs@${DOMAIN}>`]) assert.equal((await smtp.command(cmd)).code, 250);
      assert.equal((await smtp.command('DATA')).code, 354);
      assert.equal((await smtp.data(BASES['mixed']!)).code, 250);
      await smtp.quit();
      uuid = (await http('/api/mails?limit=1&offset=0', { jwt })).json.results[0].uuid;
    });

    it('new_address: any JSON body, any content type -> 200/400/409/415, never 5xx', async () => {
      const domainArb = fc.oneof(fc.constant(undefined), fc.constantFrom(DOMAIN, DOMAIN.toUpperCase(), '', 'example.com', `${DOMAIN}.`, ` ${DOMAIN}`), fc.string({ maxLength: 40 }));
      const bodyArb = fc.oneof(
        fc.record({ name: fc.option(nameArb, { nil: undefined }), domain: domainArb, cf_token: fc.option(fc.string(), { nil: undefined }) }, { requiredKeys: [] }),
        fc.record({ name: fc.jsonValue(), domain: fc.jsonValue() }, { requiredKeys: [] }),
        fc.jsonValue(),
      );
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(bodyArb.map((b) => JSON.stringify(b) ?? 'null'), fc.string({ maxLength: 200 })),
          fc.constantFrom('application/json', 'application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded', 'application/JSON'),
          async (body, contentType) => {
            const res = await http('/api/new_address', { method: 'POST', body, headers: { 'content-type': contentType } });
            assertWellFormed(res, `new_address ${contentType} ${body.slice(0, 80)}`);
            assert.ok([200, 400, 409, 415].includes(res.status), `${res.status} ${res.text}`);
            if (res.status === 200) assert.match(res.json.address, new RegExp(`^[a-z0-9._-]{1,64}@${DOMAIN.replace('.', '\\.')}$`));
          },
        ),
        { numRuns: runs(200) },
      );
    });

    it('GET /api/mails: limit/offset are plain decimal integers (limit 1..100) or 400', async () => {
      const numeric = fc.oneof(fc.integer({ min: -5, max: 150 }).map(String), fc.bigInt(0n, 10n ** 30n).map(String), fc.constantFrom('007', '0', '100', '101', '9007199254740993'));
      const junk = fc.oneof(fc.string({ maxLength: 20 }), fc.constantFrom('', ' 1', '1 ', '+1', '1.0', '1e1', '0x10', 'Infinity', 'NaN', '-0', '1,2', '١'));
      const param = fc.option(fc.oneof(numeric, numeric, junk), { nil: undefined });
      await fc.assert(
        fc.asyncProperty(param, param, async (limit, offset) => {
          const qs = [limit !== undefined && `limit=${encodeURIComponent(limit)}`, offset !== undefined && `offset=${encodeURIComponent(offset)}`].filter(Boolean).join('&');
          const res = await http(`/api/mails?${qs}`, { jwt });
          assertWellFormed(res, `?${qs}`);
          const int = (s: string | undefined) => (s !== undefined && /^\d+$/.test(s) && Number.isFinite(Number(s)) ? Number(s) : undefined);
          const l = int(limit);
          const o = int(offset);
          const ok = l !== undefined && l >= 1 && l <= 100 && o !== undefined;
          assert.equal(res.status, ok ? 200 : 400, `?${qs} -> ${res.status} ${res.text}`);
          if (ok) {
            assert.equal(res.json.count, 1);
            assert.equal(res.json.results.length, o === 0 ? 1 : 0);
          }
        }),
        { numRuns: runs(300) },
      );
    });

    it('GET /api/mails/wait and /api/events: since/timeout are plain decimal integers in range or 400', async () => {
      const numeric = fc.oneof(fc.integer({ min: -5, max: 70 }).map(String), fc.bigInt(0n, 10n ** 30n).map(String), fc.constantFrom('007', '0', '60', '61'));
      const junk = fc.oneof(fc.string({ maxLength: 20 }), fc.constantFrom('', ' 1', '1 ', '+1', '1.0', '1e1', '0x10', 'Infinity', 'NaN', '-0', '١'));
      const param = fc.option(fc.oneof(numeric, numeric, junk), { nil: undefined });
      const int = (s: string | undefined) => (s !== undefined && /^\d+$/.test(s) && Number.isFinite(Number(s)) ? Number(s) : undefined);
      const mailId = (await http('/api/mails?limit=1&offset=0', { jwt })).json.results[0].id as number;
      await fc.assert(
        fc.asyncProperty(param, param, async (since, timeout) => {
          const qs = [since !== undefined && `since=${encodeURIComponent(since)}`, timeout !== undefined && `timeout=${encodeURIComponent(timeout)}`].filter(Boolean).join('&');
          const s = since === undefined ? 0 : int(since);
          const t = timeout === undefined ? 30 : int(timeout);
          const valid = s !== undefined && t !== undefined && t <= 60;
          // A valid wait that would block is not sent; its validation is what is under test.
          if (valid && s >= mailId && t > 0) return;
          const res = await http(`/api/mails/wait?${qs}`, { jwt });
          assertWellFormed(res, `wait?${qs}`);
          assert.equal(res.status, !valid ? 400 : s < mailId ? 200 : 204, `wait?${qs} -> ${res.status} ${res.text}`);
          if (since !== undefined && int(since) === undefined) {
            const ev = await http(`/api/events?since=${encodeURIComponent(since)}`, { jwt });
            assertWellFormed(ev, `events?since=${since}`);
            assert.equal(ev.status, 400);
          }
        }),
        { numRuns: runs(200) },
      );
    });

    it('mail paths: any uuid or attachment id other than the real ones is 404, never 5xx', async () => {
      const segment = fc.oneof(
        fc.string({ maxLength: 80 }),
        fc.string({ unit: 'binary', maxLength: 80 }),
        fc.constantFrom(uuid.toUpperCase(), uuid + ' ', ` ${uuid}`, uuid.slice(0, -1), `${uuid}\u0000`, '0', '-1', '99999999', '1e3', '00', 'NaN', '%', '%%', '\\'),
      );
      await fc.assert(
        fc.asyncProperty(segment, fc.constantFrom('mail', 'delete', 'attachment-uuid', 'attachment-id'), async (seg, where) => {
          const enc = encodeURIComponent(seg);
          const [method, path] =
            where === 'mail' ? ['GET', `/api/mail/${enc}`] : where === 'delete' ? ['DELETE', `/api/mails/${enc}`] : where === 'attachment-uuid' ? ['GET', `/api/attachment/${enc}/0`] : ['GET', `/api/attachment/${uuid}/${enc}`];
          const res = await http(path, { method, jwt });
          assertWellFormed(res, `${method} ${path}`, { binary: where.startsWith('attachment') });
          if (where === 'attachment-id' && (seg === '0' || seg === '1')) assert.equal(res.status, 200, 'the two real attachment ids');
          else assert.equal(res.status, 404, `${method} ${path} -> ${res.status} ${res.text}`);
        }),
        { numRuns: runs(300) },
      );
      // The real mail survived all of that.
      assert.equal((await http(`/api/mail/${uuid}`, { jwt })).status, 200);
    });

    it('Authorization headers other than "Bearer <the jwt>" are 401 on every JWT endpoint', async () => {
      const headerChar = fc.oneof(fc.integer({ min: 0x20, max: 0x7e }), fc.constant(0x09), fc.integer({ min: 0x80, max: 0xff })).map((c) => String.fromCharCode(c));
      const auth = fc.oneof(
        fc.string({ unit: headerChar, maxLength: 120 }),
        fc.constantFrom(`bearer ${jwt}`, `Bearer  ${jwt}`, `Bearer ${jwt} `, `Bearer "${jwt}"`, `Basic ${jwt}`, jwt, `Bearer ${jwt}x`, `Bearer ${jwt.slice(0, -2)}`),
        fc.tuple(fc.string({ unit: headerChar, maxLength: 4 }), fc.string({ unit: headerChar, maxLength: 4 })).map(([a, b]) => `Bearer ${a}${jwt}${b}`).filter((h) => h !== `Bearer ${jwt}`),
      );
      const endpoints = [
        ['GET', '/api/settings'],
        ['GET', '/api/mails?limit=1&offset=0'],
        ['GET', `/api/mail/${uuid}`],
        ['GET', `/api/attachment/${uuid}/0`],
        ['GET', '/api/mails/wait?timeout=0'],
        ['GET', '/api/events'],
        ['DELETE', `/api/mails/${uuid}`],
        ['DELETE', '/api/clear_inbox'],
        ['DELETE', '/api/delete_address'],
      ] as const;
      await fc.assert(
        fc.asyncProperty(auth.filter((h) => h.trim() !== `Bearer ${jwt}`), fc.constantFrom(...endpoints), async (authorization, [method, path]) => {
          const res = await http(path, { method, headers: { authorization } });
          assertWellFormed(res, `${method} ${path}`);
          assert.equal(res.status, 401, `${method} ${path} with ${JSON.stringify(authorization)} -> ${res.status}`);
        }),
        { numRuns: runs(300) },
      );
      assert.equal((await http(`/api/mail/${uuid}`, { jwt })).status, 200, 'nothing was deleted by a bad token');
    });

    it('session endpoints: any cookie, any body -> 4xx plain text (no session was ever created by these requests)', async () => {
      const cookieChar = fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c));
      const cookie = fc.oneof(
        fc.string({ unit: cookieChar, maxLength: 100 }).map((v) => `session_id=${v}`),
        fc.string({ unit: cookieChar, maxLength: 100 }),
        fc.constantFrom('session_id=', 'session_id=a.b', 'session_id=s%3Aabc.def', 'session_id=' + 'x'.repeat(3000)),
      );
      const body = fc.oneof(fc.jsonValue().map((v) => JSON.stringify(v) ?? 'null'), fc.record({ address: fc.oneof(fc.string(), fc.constant(`api-inputs@${DOMAIN}`)) }).map((v) => JSON.stringify(v)), fc.string());
      await fc.assert(
        fc.asyncProperty(cookie, body, fc.constantFrom('GET /api/session/addresses', 'POST /api/switch_address', 'POST /api/logout'), async (c, b, route) => {
          const [method, path] = route.split(' ') as [string, string];
          const res = await http(path, { method, headers: { cookie: c }, ...(method === 'POST' && path.endsWith('switch_address') ? { body: b } : {}) });
          assertWellFormed(res, `${route} cookie ${c.slice(0, 60)}`);
          assert.ok([400, 401, 403].includes(res.status), `${route} -> ${res.status} ${res.text}`);
          assert.ok(!res.setCookies.some((sc) => /^(session_id|jwt)=[^;]+/.test(sc)), 'no credentials are handed out');
        }),
        { numRuns: runs(200) },
      );
    });
  });

  describe('header parsing and extraction', () => {
    const knownHeader = fc.constantFrom('Subject', 'From', 'To', 'Cc', 'Date', 'Message-ID', 'Content-Type', 'Content-Transfer-Encoding', 'Content-Disposition', 'MIME-Version', 'Reply-To', 'subject', 'FROM');
    const headerName = fc.oneof(knownHeader, knownHeader, fc.string({ minLength: 1, maxLength: 20 }), fc.string({ unit: 'binary', minLength: 1, maxLength: 8 }));
    const encodedWord = fc
      .tuple(fc.constantFrom('UTF-8', 'utf-8', 'ISO-8859-1', 'windows-1252', 'x-unknown', '', 'UTF-8*en'), fc.constantFrom('B', 'Q', 'b', 'q', 'X', ''), fc.string({ unit: 'binary-ascii', maxLength: 40 }))
      .map(([cs, enc, text]) => `=?${cs}?${enc}?${text}?=`);
    const addressList = fc
      .array(fc.tuple(fc.string({ maxLength: 12 }), fc.string({ maxLength: 12 }), fc.string({ maxLength: 12 })), { maxLength: 4 })
      .map((l) => l.map(([name, local, domain]) => `"${name}" <${local}@${domain}>`).join(', '));
    const headerValue = fc.oneof(
      fc.string({ maxLength: 120 }),
      fc.string({ unit: 'binary', maxLength: 120 }),
      fc.string({ unit: 'binary-ascii', maxLength: 120 }),
      fc.array(encodedWord, { maxLength: 4 }).map((a) => a.join(' ')),
      addressList,
      fc.constantFrom('multipart/mixed; boundary=b', 'multipart/alternative', 'text/html', 'base64', 'quoted-printable', 'Mon, 99 Foo 2026 99:99:99', '<>', '(((', '"'),
    );
    const body = fc.oneof(
      fc.string({ maxLength: 400 }),
      fc.string({ unit: 'binary', maxLength: 400 }),
      fc.string({ unit: 'binary-ascii', maxLength: 400 }),
      fc.array(fc.constantFrom('<a href="https://x.example/a?b=1&amp;c">', '</a>', '<p>', '<script>', '</script>', 'code 123456', '=3D', '=C3=A9', '--b', '\r\n', 'https://', '&#x1F600;', '&#99999999;', '&#xD83D;', '&#56832;', ' '), { maxLength: 40 }).map((a) => a.join('')),
      fc.string({ unit: fc.constantFrom('w', ' ', '\u{1F600}', '\u{1F4E7}'), minLength: 150, maxLength: 300 }),
    );
    const fromParts = fc
      .tuple(fc.array(fc.tuple(headerName, headerValue), { maxLength: 12 }), body, fc.constantFrom('\r\n', '\n', '\r'), fc.constantFrom<BufferEncoding>('utf8', 'latin1'))
      .map(([headers, b, eol, enc]) => Buffer.from(headers.map(([n, v]) => `${n}: ${v}`).join(eol) + eol + eol + b, enc));
    const part = fc.record({
      type: fc.constantFrom('text/plain', 'text/html', 'application/octet-stream', 'image/png', 'message/rfc822', 'multipart/mixed; boundary=inner', 'text/plain; charset=iso-8859-1', 'text/calendar', ''),
      encoding: fc.constantFrom('7bit', '8bit', 'base64', 'quoted-printable', 'binary', 'x-garbage', ''),
      disposition: fc.constantFrom('', 'attachment', 'attachment; filename="a.txt"', "attachment; filename*=UTF-8''%C3%A9t%C3%A9.pdf", 'inline; filename=x.png', 'attachment; filename="', 'attachment; filename="../../etc/passwd"'),
      body,
    });
    const multipart = fc
      .record({ boundary: fc.string({ unit: fc.constantFrom(...'abc123=_-.+ '.split('')), minLength: 1, maxLength: 20 }), parts: fc.array(part, { maxLength: 5 }), closed: fc.boolean() })
      .map(({ boundary, parts, closed }) => {
        const out = [`Subject: multipart fuzz`, `Content-Type: multipart/mixed; boundary="${boundary}"`, ''];
        for (const p of parts) {
          out.push(`--${boundary}`);
          if (p.type) out.push(`Content-Type: ${p.type}`);
          if (p.encoding) out.push(`Content-Transfer-Encoding: ${p.encoding}`);
          if (p.disposition) out.push(`Content-Disposition: ${p.disposition}`);
          out.push('', p.encoding === 'base64' ? Buffer.from(p.body).toString('base64') : p.body);
        }
        if (closed) out.push(`--${boundary}--`);
        return Buffer.from(out.join('\r\n'), 'utf8');
      });
    const rawArb = fc.oneof(fromParts, multipart, fc.uint8Array({ maxLength: 3000 }).map((u) => Buffer.from(u)));

    it('parseMessage + buildMetadata never throw and always give schema-valid metadata that round-trips through JSON', async () => {
      await fc.assert(
        fc.asyncProperty(rawArb, async (raw) => {
          const email = await parseMessage(raw);
          const meta = buildMetadata(email, raw.length);
          assertMetadata(meta, raw.length);
        }),
        { numRuns: runs(600) },
      );
    });

    it('extractCodes, extractLinks, htmlToText and makePreview never throw on arbitrary text', () => {
      const text = fc.oneof(
        fc.string({ maxLength: 300 }),
        fc.string({ unit: 'binary', maxLength: 300 }),
        fc.string({ unit: 'binary-ascii', maxLength: 300 }),
        // Long enough to be cut for the preview, with astral characters around the cut.
        fc.string({ unit: fc.constantFrom('a', ' ', '\u{1F600}', '\u00e9', '\u{10348}'), minLength: 150, maxLength: 400 }),
        fc.array(fc.constantFrom('&#xD800;', '&#56320;', '&#x1F600;', '&#0;', '&#x110000;', '&amp;', '<b>', ' ', 'x'), { maxLength: 60 }).map((a) => a.join('')),
      );
      fc.assert(
        fc.property(text, text, (a, b) => {
          const plain = htmlToText(a);
          assert.equal(typeof plain, 'string');
          const codes = extractCodes(a, b);
          assert.ok(Array.isArray(codes) && codes.length <= 10 && codes.every((c) => typeof c === 'string' && /\d/.test(c)));
          const links = extractLinks(b, a);
          assert.ok(links.every((l) => URL.canParse(l)));
          const preview = makePreview(plain);
          assert.ok(preview.length <= 201);
          assert.ok(!LONE_SURROGATE.test(preview) || LONE_SURROGATE.test(plain), `the preview cut a surrogate pair: ${JSON.stringify(preview)}`);
        }),
        { numRuns: runs(1500) },
      );
    });

    it('extractCodes finds a code after the phrasings mail uses, at the end of a sentence or clause too', () => {
      // Two keywords in a row ("verification code is …") used to stop at the word
      // between them; a code before "." or "," used to be refused as a decimal.
      const phrase = fc.constantFrom('Your code is', 'Your verification code is', 'Your one-time password is', 'Use this confirmation code:', 'Verify with PIN', 'Your login code:', 'Enter', 'Your OTP code for sign-in is');
      const code = fc.oneof(
        fc.integer({ min: 0, max: 999_999 }).map((n) => String(n).padStart(6, '0')),
        fc.integer({ min: 1000, max: 9999 }).filter((n) => !(n >= 1900 && n <= 2099)).map(String),
      );
      fc.assert(
        fc.property(phrase, code, fc.constantFrom('', '.', ',', '!', ';', ')', '. Thanks', ', valid for 10 minutes.'), (p, c, tail) => {
          const codes = extractCodes('', `Hello,\n${p} ${c}${tail}\n`);
          assert.ok(codes.includes(c), `"${p} ${c}${tail}" gave ${JSON.stringify(codes)}`);
        }),
        { numRuns: runs(500) },
      );
      // Decimals and clock times are not codes.
      for (const t of ['Total: 1234.56 EUR', 'Total: 1234,56 EUR', 'Starts 1200:30']) assert.deepEqual(extractCodes('', t), [], t);
    });

    it('extractCodes finds a planted 6-digit code in "Your code is NNNNNN", whatever surrounds it, in text and in an HTML-only mail', async () => {
      const code = fc.integer({ min: 0, max: 999_999 }).map((n) => String(n).padStart(6, '0'));
      const around = fc.oneof(fc.string({ maxLength: 200 }), fc.string({ unit: 'binary', maxLength: 200 }));
      fc.assert(
        fc.property(code, around, around, fc.string({ maxLength: 60 }), fc.constantFrom('', '.', '!', ','), (c, before, after, subject, punct) => {
          const codes = extractCodes(subject, `${before}\nYour code is ${c}${punct}\n${after}`);
          assert.ok(codes.includes(c), `${c} not in ${JSON.stringify(codes)}`);
        }),
        { numRuns: runs(1000) },
      );
      await fc.assert(
        fc.asyncProperty(code, fc.string({ unit: fc.constantFrom(...'abc xyz<>/p'.split('')), maxLength: 40 }), async (c, noise) => {
          const html = `<html><body><div>${noise.replace(/[<>]/g, ' ')}</div><p>Your code is <b>${c}</b>.</p></body></html>`;
          const raw = Buffer.from(`Subject: Sign-in\r\nContent-Type: text/html; charset=utf-8\r\n\r\n${html}\r\n`);
          const meta = buildMetadata(await parseMessage(raw), raw.length);
          assert.ok(meta.codes.includes(c), `${c} not in ${JSON.stringify(meta.codes)}`);
        }),
        { numRuns: runs(200) },
      );
    });

    it('previews and entity decoding never leave half a surrogate pair', () => {
      for (const [text, html] of [
        ['a' + '\u{1F600}'.repeat(150), undefined],
        ['ab' + '\u{1F600}'.repeat(150), undefined],
        ['', '<p>' + '&#x1F600;'.repeat(150) + '</p>'],
        ['', '<p>&#xD83D;&#xDE00; and &#55357; alone</p>'],
      ] as const) {
        const meta = buildMetadata({ text: text || undefined, html } as Parameters<typeof buildMetadata>[0], 1);
        assertMetadata(meta, 1);
      }
      // HTML's rule (and the entities library's): a lone surrogate reference becomes U+FFFD, never half a pair.
      assert.equal(htmlToText('&#xD800;'), '\ufffd', 'a surrogate reference is not decoded to half a pair');
    });

    it('extraction is linear: adversarial 300 KB inputs (unclosed tags, punctuation runs) finish in well under a second', () => {
      const cases = [
        ['unclosed <', '<'.repeat(300_000)],
        ['unclosed <script', '<script '.repeat(40_000)],
        ['unclosed <br', '<br'.repeat(100_000)],
        ['url + dots', 'https://x.example/' + '.'.repeat(300_000) + 'x'],
        ['href + dots', '<a href="https://x.example/' + '.'.repeat(300_000)],
        ['entities', '&#x'.repeat(100_000)],
        ['keywords', 'code '.repeat(60_000)],
      ] as const;
      for (const [name, input] of cases) {
        const runs = timedRuns(1000, () => {
          const text = htmlToText(input);
          extractLinks(text, input);
          extractCodes(name, text);
          makePreview(text);
        });
        assert.ok(Math.min(...runs) < 1000, `${name}: ${runsText(runs)}`);
      }
    });
  });

  describe('the worker parser agrees with a parse on this thread, and keeps the decoded attachments', () => {
    const parser = createMessageParser({ threads: 1, timeoutMs: 10_000 });
    after(() => parser.close());
    /** What delivery stores (parsed in a worker) must equal a direct parse, attachment bytes included. */
    const agree = async (raw: string, what: string) => {
      const buf = Buffer.from(raw, 'latin1');
      const direct = await parseMessage(buf);
      const parsed = await parser.parse(buf);
      // Degraded exactly when postal-mime refuses the message (a limit): then only its header block was read.
      const refused = await PostalMime.parse(buf, PARSE_OPTIONS).then(
        () => false,
        () => true,
      );
      assert.equal(parsed.degraded, refused, what);
      assert.deepStrictEqual(parsed.metadata, buildMetadata(direct, 0), what);
      const decoded = (direct?.attachments ?? []).slice(0, parsed.metadata.attachments.length).map((a) => Buffer.from(typeof a.content === 'string' ? Buffer.from(a.content) : new Uint8Array(a.content as ArrayBuffer)));
      assert.deepStrictEqual(parsed.attachments.map((a) => a.content), decoded, what);
      // The sizes the metadata lists are the lengths the download serves.
      assert.deepStrictEqual(parsed.metadata.attachments.map((a) => a.size), decoded.map((d) => d.length), what);
    };

    it('every base message and every mutation of it', async () => {
      for (const [name, base] of Object.entries(BASES)) {
        await agree(base, name);
        for (const kind of KINDS) for (let n = 0; n < 3; n++) await agree(mutate(base, { kind, at: 0.5, n }), `${name}/${kind}/${n}`);
      }
    });

    it('base64 of any length, line length and stray characters; quoted-printable; 8bit (property)', async () => {
      const part = fc.record({
        data: fc.uint8Array({ maxLength: 2000 }),
        encoding: fc.constantFrom('base64', 'quoted-printable', '8bit', 'binary', '7bit'),
        lineLength: fc.integer({ min: 1, max: 120 }),
        stray: fc.constantFrom('', '=', '==', '!', ' ', '\t', '\xe9', '-_'),
        type: fc.constantFrom('application/pdf', 'image/png', 'application/octet-stream', 'text/calendar', 'application/ics', 'text/csv', 'audio/x-y'),
      });
      await fc.assert(
        fc.asyncProperty(fc.array(part, { minLength: 1, maxLength: 4 }), async (parts) => {
          const body = parts.map((p, i) => {
            const data = Buffer.from(p.data);
            let encoded: string;
            if (p.encoding === 'base64') {
              const b = data.toString('base64');
              const out: string[] = [];
              for (let j = 0; j < b.length; j += p.lineLength) out.push(b.slice(j, j + p.lineLength) + (j % 3 === 0 ? p.stray : ''));
              encoded = out.join(CRLF);
            } else if (p.encoding === 'quoted-printable') {
              encoded = [...data].map((c) => (c >= 33 && c <= 126 && c !== 61 ? String.fromCharCode(c) : `=${c.toString(16).toUpperCase().padStart(2, '0')}`)).join('').replace(/.{1,72}/g, '$&=' + CRLF);
            } else {
              encoded = data.toString('latin1').replace(/--/g, '-');
            }
            return lines('--b', `Content-Type: ${p.type}; name="f${i}.bin"`, `Content-Transfer-Encoding: ${p.encoding}`, `Content-Disposition: attachment; filename="f${i}.bin"`, '', encoded);
          });
          const raw = lines('From: a@example.com', 'Subject: parts', 'MIME-Version: 1.0', 'Content-Type: multipart/mixed; boundary="b"', '', '--b', 'Content-Type: text/plain', '', 'hello') + body.join('') + lines('--b--');
          await agree(raw, JSON.stringify(parts.map((p) => ({ ...p, data: p.data.length }))));
        }),
        { numRuns: runs(200) },
      );
    });
  });

  describe('mutated real messages through SMTP', () => {
    let seq = 0;

    /** One SMTP session for one mutated message; then the API must serve what was stored. */
    async function deliverAndRead(raw: string, what: string): Promise<void> {
      // A name no generator above produces (they ran on this server too).
      const address = `smtp-mut-${seq++}@${DOMAIN}`;
      const { jwt } = await createAddress(server, { name: address.split('@')[0] });
      const smtp = await SmtpClient.connect(server.smtpPort);
      let final;
      try {
        for (const cmd of ['EHLO fuzz.test', 'MAIL FROM:<fuzz@example.com>', `RCPT TO:<${address}>`]) assert.equal((await smtp.command(cmd)).code, 250, `${what}: ${cmd}`);
        assert.equal((await smtp.command('DATA')).code, 354);
        // SmtpClient.reply times out after 10 s: a stuck connection fails here.
        final = await smtp.data(Buffer.from(raw, 'latin1'));
        assert.ok(/^\d{3}[ -]/.test(final.text), `${what}: not an SMTP reply: ${final.text}`);
        assert.equal(final.code, 250, `${what}: ${final.text.trim()}`);
        // The session is still in step: exactly one reply per command.
        assert.equal((await smtp.command('NOOP')).code, 250, `${what}: NOOP after DATA`);
      } finally {
        await smtp.quit();
      }

      const list = await http('/api/mails?limit=10&offset=0', { jwt });
      assertWellFormed(list, `${what}: list`);
      assert.equal(list.json.count, 1, `${what}: the 250'd mail is listed once`);
      const item = list.json.results[0];
      const full = await http(`/api/mail/${item.uuid}`, { jwt });
      assertWellFormed(full, `${what}: read`);
      assert.equal(full.status, 200);
      const meta = JSON.parse(full.json.metadata);

      // Stored byte-exact after dot-unstuffing, with a Received: block in front. The
      // client stuffs a dot only after CRLF (RFC 5321 §4.5.2); smtp-server takes one
      // dot off after any LF (lib/smtp-stream.js), so a bare "\n.." loses one.
      const withEnd = raw.endsWith('\r\n') ? raw : raw + '\r\n';
      const stored = Buffer.from(withEnd.replace(/(?<!\r)\n\.\./g, '\n.'), 'latin1');
      const expected = rendered(stored);
      assert.ok(full.json.raw.endsWith(expected), `${what}: raw is stored as received`);
      const received = full.json.raw.slice(0, full.json.raw.length - expected.length);
      assert.match(received, /^Received: from [^\r\n]*\r\n\tby [^\r\n]*\r\n\tfor <[^\r\n]*>; [^\r\n]*\r\n$/, `${what}: one Received: header in front`);
      assertMetadata(meta, received.length + stored.length);

      for (const a of meta.attachments as { id: string; size: number }[]) {
        const res = await http(`/api/attachment/${item.uuid}/${a.id}`, { jwt });
        assert.equal(res.status, 200, `${what}: attachment ${a.id} -> ${res.status} ${res.text}`);
        assert.equal(Number(res.headers.get('content-length')), a.size, `${what}: attachment ${a.id} size`);
      }
      const health = await http('/health_check');
      assert.equal(health.status, 200, `${what}: health after delivery`);
    }

    it('every mutation of every base message, once', async () => {
      for (const [name, base] of Object.entries(BASES)) {
        assert.equal(Buffer.from(base, 'latin1').toString('latin1'), base);
        for (const kind of KINDS) {
          const n = kind === 'pathological-html' ? Object.keys(BASES).indexOf(name) : 3;
          await deliverAndRead(mutate(base, { kind, at: 0.5, n }), `${name}/${kind}`);
        }
      }
      // The variants not reached above.
      for (let n = 4; n < 8; n++) await deliverAndRead(mutate(BASES['alternative']!, { kind: 'pathological-html', at: 0, n }), `pathological-html/${n}`);
      for (let n = 0; n < 4; n++) await deliverAndRead(mutate(BASES['mixed']!, { kind: 'huge-header', at: 0, n }), `huge-header/${n}`);
      for (let n = 0; n < GARBAGE_HEADERS.length; n++) await deliverAndRead(mutate(BASES['encodedWords']!, { kind: 'header-garbage', at: 0, n }), `header-garbage/${n}`);
    });

    it('random chains of mutations (property)', async () => {
      const op = fc.record({ kind: fc.constantFrom(...KINDS.filter((k) => k !== 'pathological-html' && k !== 'long-line')), at: fc.double({ min: 0, max: 1, noNaN: true }), n: fc.nat(255) });
      await fc.assert(
        fc.asyncProperty(fc.constantFrom(...Object.keys(BASES)), fc.array(op, { minLength: 1, maxLength: 3 }), async (base, ops) => {
          const raw = ops.reduce((s, o) => mutate(s, o), BASES[base]!);
          await deliverAndRead(raw, `${base}/${ops.map((o) => `${o.kind}@${o.at.toFixed(2)}#${o.n}`).join('+')}`);
        }),
        { numRuns: runs(40) },
      );
    });
  });
});
