// GET /api/mail/{uuid}/parsed (docs/api.md; docs/decisions.md "Parsed mail"): the
// stored message parsed again in the parser's worker, with decoded headers and
// addresses, the whole text and HTML, attachment details, codes and links. Real SMTP
// in, real HTTP out, on SQLite.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { client, createAddress, request, sendMail, startTestServer, type HttpResult, type TestServer } from '../../helpers/harness.js';

const crlf = (lines: string[]) => lines.join('\r\n');
const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489', 'hex');
const PDF = Buffer.from('%PDF-1.4\n% a small document\n%%EOF\n', 'latin1');

/** Text, HTML, cc, reply-to, encoded headers, an inline image with a Content-ID and an attachment. */
function richMessage(to: string): string {
  return crlf([
    'From: =?UTF-8?B?SsO8cmdlbiBNw7xsbGVy?= <juergen@app.example.com>',
    `To: Alice <alice@example.org>, ${to}`,
    'Cc: "Carol C" <carol@example.org>, dave@example.org',
    'Reply-To: =?UTF-8?Q?Supp=C3=B6rt?= <support@app.example.com>',
    'Subject: =?UTF-8?Q?Best=C3=A4tigung:?= your code',
    'Date: Tue, 02 Jan 2024 10:00:00 +0000',
    'Message-ID: <parsed-1@app.example.com>',
    'MIME-Version: 1.0',
    'X-Folded: first part',
    '  second part',
    'Content-Type: multipart/mixed; boundary="mixed"',
    '',
    '--mixed',
    'Content-Type: multipart/related; boundary="rel"',
    '',
    '--rel',
    'Content-Type: multipart/alternative; boundary="alt"',
    '',
    '--alt',
    'Content-Type: text/plain; charset=utf-8',
    'Content-Transfer-Encoding: quoted-printable',
    '',
    'Hallo J=C3=BCrgen,',
    'your code is 482913.',
    'Confirm: https://app.example.com/confirm?t=3Dabc',
    '--alt',
    'Content-Type: text/html; charset=utf-8',
    'Content-Transfer-Encoding: quoted-printable',
    '',
    '<p>Hallo J=C3=BCrgen, your code is <b>482913</b>.</p><a href=3D"https://app.exa=',
    'mple.com/confirm?t=3Dabc">Confirm</a><img src=3D"cid:logo@app">',
    '--alt--',
    '--rel',
    'Content-Type: image/png',
    'Content-ID: <logo@app>',
    'Content-Transfer-Encoding: base64',
    '',
    PNG.toString('base64'),
    '--rel--',
    '--mixed',
    'Content-Type: application/pdf; name="report.pdf"',
    'Content-Disposition: attachment; filename="report.pdf"',
    'Content-Transfer-Encoding: base64',
    '',
    PDF.toString('base64'),
    '--mixed--',
    '',
  ]);
}

/** The header lines of a raw message, unfolded, as [name, value]. */
function headerLines(raw: string): [string, string][] {
  const block = raw.slice(0, raw.indexOf('\r\n\r\n'));
  const out: [string, string][] = [];
  for (const line of block.split('\r\n')) {
    if (/^[ \t]/.test(line)) out[out.length - 1]![1] += line;
    else out.push([line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1).trim()]);
  }
  return out;
}

function assertPlainError(res: HttpResult, status: number, what: string) {
  assert.equal(res.status, status, `${what}: ${res.status} ${res.text}`);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain/, what);
  assert.equal(res.json, undefined, `${what}: not JSON`);
  assert.ok(res.text.length > 0, what);
}

describe('GET /api/mail/{uuid}/parsed', () => {
  let server: TestServer;
  let api: ReturnType<typeof client>;
  before(async () => {
    server = await startTestServer();
    api = client(server);
  });
  after(async () => server?.close());

  /** Delivers `raw` to `address` over SMTP and returns the list item GET /api/mails gives it. */
  async function deliver(address: string, jwt: string, raw: string) {
    await sendMail(server.smtpPort, { to: [address], message: raw });
    const list = await api('/api/mails?limit=1&offset=0', { jwt });
    return list.json.results[0] as { id: number; uuid: string; message_id: string; created_at: string; metadata: string };
  }

  it('answers every field exactly for a multipart message with text, HTML, cc, reply-to, encoded headers, an inline image and an attachment', async () => {
    const { address, jwt } = await createAddress(server);
    const raw = richMessage(address);
    const item = await deliver(address, jwt, raw);
    const res = await api(`/api/mail/${item.uuid}/parsed`, { jwt });
    assert.equal(res.status, 200, res.text);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);

    // The stored message starts with the server's Received: line; the headers follow it in order.
    const stored = (await api(`/api/mail/${item.uuid}`, { jwt })).json.raw as string;
    const [received] = headerLines(stored);
    assert.equal(received![0], 'Received');
    assert.deepEqual(res.json, {
      id: item.id,
      uuid: item.uuid,
      message_id: '<parsed-1@app.example.com>',
      created_at: item.created_at,
      seen: false,
      subject: 'Bestätigung: your code',
      date: '2024-01-02T10:00:00.000Z',
      from: { name: 'Jürgen Müller', address: 'juergen@app.example.com' },
      to: [
        { name: 'Alice', address: 'alice@example.org' },
        { name: '', address },
      ],
      cc: [
        { name: 'Carol C', address: 'carol@example.org' },
        { name: '', address: 'dave@example.org' },
      ],
      reply_to: [{ name: 'Suppört', address: 'support@app.example.com' }],
      text: 'Hallo Jürgen,\nyour code is 482913.\nConfirm: https://app.example.com/confirm?t=abc\n',
      html: '<p>Hallo Jürgen, your code is <b>482913</b>.</p><a href="https://app.example.com/confirm?t=abc">Confirm</a><img src="cid:logo@app">\n',
      headers: [
        { name: 'Received', value: received![1] },
        { name: 'From', value: 'Jürgen Müller <juergen@app.example.com>' },
        { name: 'To', value: `Alice <alice@example.org>, ${address}` },
        { name: 'Cc', value: '"Carol C" <carol@example.org>, dave@example.org' },
        { name: 'Reply-To', value: 'Suppört <support@app.example.com>' },
        { name: 'Subject', value: 'Bestätigung: your code' },
        { name: 'Date', value: 'Tue, 02 Jan 2024 10:00:00 +0000' },
        { name: 'Message-ID', value: '<parsed-1@app.example.com>' },
        { name: 'MIME-Version', value: '1.0' },
        { name: 'X-Folded', value: 'first part  second part' },
        { name: 'Content-Type', value: 'multipart/mixed; boundary="mixed"' },
      ],
      headers_truncated: false,
      attachments: [
        { id: '0', filename: 'attachment-1', content_type: 'image/png', size: PNG.length, content_id: 'logo@app', inline: true },
        { id: '1', filename: 'report.pdf', content_type: 'application/pdf', size: PDF.length, content_id: null, inline: false },
      ],
      attachments_truncated: false,
      codes: ['482913'],
      links: ['https://app.example.com/confirm?t=abc'],
      degraded: false,
      // The verdicts of the mail's arrival; the test server's DNS refuses every look-up (mail-auth.test.ts has real ones).
      auth: { spf: 'temperror', dkim: [], dmarc: 'temperror', arc: 'none' },
    });

    // The ids are the download ids; GET /api/mail/{uuid} is unchanged beside it.
    const pdf = await fetch(`${server.httpUrl}/api/attachment/${item.uuid}/1`, { headers: { authorization: `Bearer ${jwt}` } });
    assert.ok(Buffer.from(await pdf.arrayBuffer()).equals(PDF));
    const full = await api(`/api/mail/${item.uuid}`, { jwt });
    assert.deepEqual(Object.keys(full.json), ['id', 'uuid', 'source', 'address', 'metadata', 'created_at', 'message_id', 'seen', 'raw']);
    assert.ok(full.json.raw.endsWith(raw));
  });

  it('takes the jwt cookie as GET /api/mail does, and answers the same bytes again', async () => {
    const { address, jwt } = await createAddress(server);
    const item = await deliver(address, jwt, crlf(['Subject: cookie', '', 'by cookie', '']));
    const byCookie = await api(`/api/mail/${item.uuid}/parsed`, { headers: { cookie: `jwt=${jwt}` } });
    assert.equal(byCookie.status, 200, byCookie.text);
    assert.equal(byCookie.json.subject, 'cookie');
    assert.equal(byCookie.json.text, 'by cookie\n');
    assert.equal(byCookie.json.html, null);
    const again = await api(`/api/mail/${item.uuid}/parsed`, { jwt });
    assert.equal(again.text, byCookie.text);
  });

  it('renders the HTML as text when the message has no text part', async () => {
    const { address, jwt } = await createAddress(server);
    const html = '<html><head><style>p { color: red }</style></head><body><p>Welcome &amp; hello,</p><p>your PIN: 7391</p><a href="https://app.example.com/start">Start</a></body></html>';
    const item = await deliver(address, jwt, crlf(['Subject: html only', 'Content-Type: text/html; charset=utf-8', '', html, '']));
    const res = await api(`/api/mail/${item.uuid}/parsed`, { jwt });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.html, `${html}\n`);
    assert.equal(res.json.text, 'Welcome & hello,\nyour PIN: 7391\nStart');
    assert.deepEqual(res.json.codes, ['7391']);
    assert.deepEqual(res.json.links, ['https://app.example.com/start']);
    assert.deepEqual(res.json.attachments, []);
  });

  it('answers a 200 KB text part whole', async () => {
    const { address, jwt } = await createAddress(server);
    const lines = Array.from({ length: 2600 }, (_, i) => `line ${String(i).padStart(5, '0')} ${'abcdefghij'.repeat(7)}`);
    const text = `${lines.join('\n')}\nthe end\n`;
    assert.ok(text.length > 200_000, `${text.length} characters`);
    const item = await deliver(address, jwt, crlf(['Subject: long', 'Content-Type: text/plain; charset=us-ascii', '', ...lines, 'the end', '']));
    const res = await api(`/api/mail/${item.uuid}/parsed`, { jwt });
    assert.equal(res.status, 200);
    assert.equal(res.json.text.length, text.length);
    assert.equal(res.json.text, text);
    assert.equal(JSON.parse(item.metadata).preview.length <= 201, true, 'the list keeps only a preview');
  });

  it('parses off the event loop: the server thread is idle for most of a slow parse', async () => {
    const { address, jwt } = await createAddress(server);
    // 20,000 text parts in 900 KB: a few hundred milliseconds of parsing, little to read or send.
    const parts = Array.from({ length: 20_000 }, (_, i) => `--b\r\nContent-Type: text/plain\r\n\r\npart ${i}`);
    const item = await deliver(address, jwt, crlf(['Subject: many parts', 'Content-Type: multipart/mixed; boundary="b"', '', ...parts, '--b--', '']));
    const before = performance.eventLoopUtilization();
    const res = await api(`/api/mail/${item.uuid}/parsed`, { jwt });
    const elu = performance.eventLoopUtilization(before);
    assert.equal(res.status, 200);
    assert.equal(res.json.degraded, false);
    assert.ok(res.json.text.startsWith('part 0\n') && res.json.text.trimEnd().endsWith('part 19999'));
    // Parsed on this thread, the loop would be busy for the whole request (utilization near 1).
    assert.ok(elu.utilization < 0.3, `event loop busy ${elu.active.toFixed(0)} of ${(elu.active + elu.idle).toFixed(0)} ms`);
  });

  it("is 404 for another address's mail, an unknown or a malformed uuid, and 401 without valid credentials", async () => {
    const owner = await createAddress(server);
    const other = await createAddress(server);
    const item = await deliver(owner.address, owner.jwt, crlf(['Subject: private', '', 'secret 123456', '']));
    const path = `/api/mail/${item.uuid}/parsed`;
    assertPlainError(await api(path, { jwt: other.jwt }), 404, "another address's token");
    assertPlainError(await api(`/api/mail/${'0'.repeat(8)}-0000-7000-8000-${'0'.repeat(12)}/parsed`, { jwt: owner.jwt }), 404, 'unknown uuid');
    assertPlainError(await api('/api/mail/not-a-uuid/parsed', { jwt: owner.jwt }), 404, 'malformed uuid');
    assertPlainError(await api(`/api/mail/${'x'.repeat(500)}/parsed`, { jwt: owner.jwt }), 404, 'over-long uuid');
    assertPlainError(await api(path), 401, 'no token');
    assertPlainError(await api(path, { jwt: 'garbage' }), 401, 'garbage token');
    assertPlainError(await api(path, { headers: { authorization: `bearer ${owner.jwt}` } }), 401, 'malformed Authorization');
    // Deleted mail is gone here too.
    assert.equal((await api(`/api/mails/${item.uuid}`, { method: 'DELETE', jwt: owner.jwt })).status, 200);
    assertPlainError(await api(path, { jwt: owner.jwt }), 404, 'deleted mail');
  });

  it('is in the OpenAPI document with its schema', async () => {
    const doc = (await api('/openapi.json')).json;
    const op = doc.paths['/api/mail/{uuid}/parsed']?.get;
    assert.ok(op, 'documented');
    assert.deepEqual(Object.keys(op.responses).sort(), ['200', '401', '404', '429', '503']);
    const schema = op.responses['200'].content['application/json'].schema;
    for (const field of ['id', 'uuid', 'message_id', 'created_at', 'seen', 'subject', 'date', 'from', 'to', 'cc', 'reply_to', 'text', 'html', 'headers', 'attachments', 'codes', 'links', 'degraded']) {
      assert.ok(schema.required.includes(field), field);
    }
    assert.deepEqual(Object.keys(schema.properties.attachments.items.properties), ['id', 'filename', 'content_type', 'size', 'content_id', 'inline']);
  });
});

describe('GET /api/mail/{uuid}/parsed: rate limit and parse budget', () => {
  it('has its own rate limit (RATE_LIMIT_PARSED_MAIL): at the limit 200, one past it 429 with Retry-After in plain text', async () => {
    const server = await startTestServer({ RATE_LIMIT_PARSED_MAIL: '3/60', RATE_LIMIT_MAIL: '10/60' });
    try {
      const { address, jwt } = await createAddress(server);
      await sendMail(server.smtpPort, { to: [address], message: crlf(['Subject: limited', '', 'x', '']) });
      const { uuid } = (await request(server.httpUrl, '/api/mails?limit=1&offset=0', { jwt })).json.results[0];
      for (let i = 1; i <= 3; i++) assert.equal((await request(server.httpUrl, `/api/mail/${uuid}/parsed`, { jwt })).status, 200, `request ${i}`);
      const limited = await request(server.httpUrl, `/api/mail/${uuid}/parsed`, { jwt });
      assertPlainError(limited, 429, 'request 4');
      assert.match(limited.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
      assert.ok(Number(limited.headers.get('retry-after')) <= 60);
      // Counted apart from GET /api/mail/{uuid}, and before authentication.
      assert.equal((await request(server.httpUrl, `/api/mail/${uuid}`, { jwt })).status, 200);
      assertPlainError(await request(server.httpUrl, `/api/mail/${uuid}/parsed`), 429, 'no token, still limited');
      assert.equal((await request(server.httpUrl, `/api/mail/${uuid}/parsed`, { jwt, localAddress: '127.0.0.2' })).status, 200, 'another client');
    } finally {
      await server.close();
    }
  });

  it('a message that outlasts PARSE_TIMEOUT answers what its header block gives, with degraded: true', async () => {
    const server = await startTestServer({ PARSE_TIMEOUT: '500ms' });
    try {
      const { address, jwt } = await createAddress(server);
      const raw = crlf([
        'From: Slow Sender <slow@example.com>',
        `To: ${address}`,
        'Cc: Carol <carol@example.org>',
        'Subject: =?UTF-8?Q?too_many_parts_=E2=9C=93?= your code 555123',
        'Content-Type: multipart/mixed; boundary="b"',
        '',
        ...Array.from({ length: 300_000 }, () => '--b\r\n\r\nx'),
        '--b--',
        '',
      ]);
      await sendMail(server.smtpPort, { to: [address], message: raw });
      const { uuid } = (await request(server.httpUrl, '/api/mails?limit=1&offset=0', { jwt })).json.results[0];
      const started = Date.now();
      const res = await request(server.httpUrl, `/api/mail/${uuid}/parsed`, { jwt });
      assert.equal(res.status, 200, res.text);
      assert.ok(Date.now() - started < 5000, `answered ${Date.now() - started} ms after the request`);
      const { headers, ...rest } = res.json;
      assert.equal(rest.degraded, true);
      assert.equal(rest.subject, 'too many parts ✓ your code 555123');
      assert.deepEqual(rest.from, { name: 'Slow Sender', address: 'slow@example.com' });
      assert.deepEqual(rest.cc, [{ name: 'Carol', address: 'carol@example.org' }]);
      assert.equal(rest.text, '');
      assert.equal(rest.html, null);
      assert.deepEqual(rest.attachments, []);
      assert.deepEqual(rest.codes, ['555123']);
      // The headers as written, the real Content-Type included.
      assert.deepEqual(
        headers.slice(1).map((h: { name: string; value: string }) => [h.name, h.value]),
        [
          ['From', 'Slow Sender <slow@example.com>'],
          ['To', address],
          ['Cc', 'Carol <carol@example.org>'],
          ['Subject', 'too many parts ✓ your code 555123'],
          ['Content-Type', 'multipart/mixed; boundary="b"'],
        ],
      );
      assert.equal((await request(server.httpUrl, '/health_check')).status, 200);
    } finally {
      await server.close();
    }
  });
});
