// Regression cases from the advisories of the tools this service replaces
// (docs/security.md "How it is tested"). Covered elsewhere, exactly:
// forged tokens (security.test.ts "tokens"; push.test.ts for streams and waits),
// one address reaching another's mail (security.test.ts "address isolation"),
// open relay (smtp.test.ts "refuses an unknown local part and a foreign domain"),
// X-Forwarded-For changing on every request (rate-limit.test.ts "TRUST_PROXY").
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { client, createAddress, DOMAIN, message, METRICS_TOKEN, openData, sendMail, startTestServer, untilPushOpen, type TestServer } from '../helpers/harness.js';
import { openEventStream, type EventStream } from '../helpers/event-stream.js';

/** One raw HTTP/1.1 request, so that the path reaches the server exactly as written. */
function rawGet(port: number, path: string, headers: Record<string, string> = {}): Promise<{ status: number; head: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let data = '';
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => (data += d));
    socket.on('error', reject);
    socket.on('close', () => {
      const end = data.indexOf('\r\n\r\n');
      resolve({ status: Number(data.slice(9, 12)), head: data.slice(0, end), body: data.slice(end + 4) });
    });
    const extra = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
    socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n${extra}\r\n`);
  });
}

describe('advisories', { timeout: 120_000 }, () => {
  let server: TestServer;
  let api: ReturnType<typeof client>;
  let httpPort: number;
  before(async () => {
    server = await startTestServer({ MAX_MESSAGE_BYTES: '1048576', METRICS_TOKEN });
    api = client(server);
    httpPort = (server.http.server.address() as { port: number }).port;
  });
  after(() => server.close());

  const healthy = async () => {
    const t = Date.now();
    assert.equal((await api('/health_check')).status, 200);
    assert.ok(Date.now() - t < 1000);
  };
  const count = async (jwt: string) => (await api('/api/mails?limit=100&offset=0', { jwt })).json.count as number;

  it('path traversal on static files and attachments (encoded, double-encoded, backslash) never serves a file outside the web root', async () => {
    const { address, jwt } = await createAddress(server);
    await sendMail(server.smtpPort, { to: [address], message: message({ Subject: 't' }, 'x') });
    const uuid = (await api('/api/mails?limit=1&offset=0', { jwt })).json.results[0].uuid as string;
    const paths = [
      '/../package.json',
      '/..%2f..%2fpackage.json',
      '/%2e%2e/%2e%2e/%2e%2e/package.json',
      '/%252e%252e%252f%252e%252e%252fpackage.json',
      '/..\\..\\package.json',
      '/..%5c..%5cpackage.json',
      '/assets/..%2f..%2f..%2f..%2fpackage.json',
      '/%2e%2e/%2e%2e/%2e%2e/%2e%2e/%2e%2e/etc/passwd',
      `/api/attachment/${uuid}/..%2f..%2f..%2fpackage.json`,
      `/api/attachment/${uuid}/%2e%2e`,
      `/api/attachment/..%2f${uuid}/0`,
    ];
    for (const path of paths) {
      const res = await rawGet(httpPort, path, { authorization: `Bearer ${jwt}` });
      // No route, and no file: the static handler serves only what is under the web root.
      assert.equal(res.status, 404, `${path}: ${res.status}`);
      assert.doesNotMatch(res.body, /"name": "@?temp-inbox|root:x:0:0/, path);
    }
    await healthy();
  });

  it('HTML and SVG attachments are downloads (attachment, nosniff, sandboxing CSP); CR/LF in a file name never adds a header', async () => {
    const { address, jwt } = await createAddress(server);
    const encodedName = `=?utf-8?B?${Buffer.from('a\r\nSet-Cookie: x=1.txt').toString('base64')}?=`;
    const raw = [
      'Subject: attachments',
      'Content-Type: multipart/mixed; boundary="b"',
      '',
      '--b',
      'Content-Type: text/html; name="page.html"',
      'Content-Disposition: attachment; filename="page.html"',
      '',
      '<script>alert(1)</script>',
      '--b',
      'Content-Type: image/svg+xml; name="image.svg"',
      '',
      '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>',
      '--b',
      `Content-Type: text/plain; name="${encodedName}"`,
      `Content-Disposition: attachment; filename="${encodedName}"`,
      '',
      'crlf',
      '--b--',
      '',
    ].join('\r\n');
    assert.equal((await sendMail(server.smtpPort, { to: [address], message: raw })).code, 250);
    const uuid = (await api('/api/mails?limit=1&offset=0', { jwt })).json.results[0].uuid as string;
    for (const [id, type] of [
      ['0', 'text/html'],
      ['1', 'image/svg+xml'],
      ['2', 'text/plain'],
    ] as const) {
      const res = await rawGet(httpPort, `/api/attachment/${uuid}/${id}`, { authorization: `Bearer ${jwt}` });
      assert.equal(res.status, 200, id);
      const headers = res.head.split('\r\n').slice(1);
      const get = (name: string) => headers.filter((h) => h.toLowerCase().startsWith(`${name}:`)).map((h) => h.slice(name.length + 1).trim());
      assert.deepEqual(get('content-type'), [type], id);
      assert.match(get('content-disposition')[0] ?? '', /^attachment;/, id);
      assert.deepEqual(get('x-content-type-options'), ['nosniff'], id);
      assert.deepEqual(get('content-security-policy'), ["default-src 'none'; sandbox"], id);
      assert.deepEqual(get('set-cookie'), [], `${id}: no header smuggled through the file name`);
    }
  });

  it('no credentialed CORS grant to a foreign origin, on the API, the long poll, the event stream and a preflight', async () => {
    const { jwt } = await createAddress(server);
    const origin = { origin: 'https://evil.example' };
    const check = (label: string, headers: Headers | Record<string, string | string[] | undefined>) => {
      const get = (n: string) => (headers instanceof Headers ? headers.get(n) : (headers[n] as string | undefined)) ?? null;
      assert.equal(get('access-control-allow-origin'), null, label);
      assert.equal(get('access-control-allow-credentials'), null, label);
    };
    check('list', (await api('/api/mails?limit=1&offset=0', { jwt, headers: origin })).headers);
    check('wait', (await api('/api/mails/wait?timeout=0', { jwt, headers: origin })).headers);
    const preflight = await api('/api/mails?limit=1&offset=0', { method: 'OPTIONS', headers: { ...origin, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' } });
    assert.equal(preflight.status, 404);
    check('preflight', preflight.headers);
    const stream = await openEventStream(server.httpUrl, '/api/events', { authorization: `Bearer ${jwt}`, ...origin, cookie: `jwt=${jwt}` });
    try {
      assert.equal(stream.status, 200);
      check('event stream', stream.headers);
    } finally {
      stream.close();
    }
  });

  it('SMTP lines ended by a bare LF: commands are read as commands, but a message whose lines end so never ends (only CRLF.CRLF does): its bare-LF dot and QUIT are message text, and the server stays up', async () => {
    const { address, jwt } = await createAddress(server);
    const socket = connect(server.smtpPort, '127.0.0.1');
    let replies = '';
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => (replies += d));
    await new Promise((r) => socket.once('connect', r));
    const until = async (re: RegExp) => {
      for (let i = 0; i < 500 && !re.test(replies); i++) await new Promise((r) => setTimeout(r, 10));
      assert.match(replies, re);
    };
    await until(/^220 /);
    // As smtp-server reads them (and Postfix did by default before 3.9): a bare LF ends a command line.
    socket.write(`EHLO a\nMAIL FROM:<x@example.org>\nRCPT TO:<${address}>\nDATA\n`);
    await until(/^354 /m);
    // Inside DATA a bare LF is no line end for the terminating dot (RFC 5321 §4.1.1.4; SMTP smuggling).
    socket.write('Subject: lf\n\nbody\n.\nQUIT\n');
    // The signal that comes after anything those lines could have caused: a real CRLF.CRLF,
    // answered once. Had the bare-LF dot ended the message, its 250 (and QUIT's 221) came first.
    socket.write('\r\n.\r\n');
    await until(/\r\n354 [^\r\n]*\r\n\d{3} [^\r\n]*\r\n/);
    socket.destroy();
    const afterData = replies.slice(replies.indexOf('\r\n354 ') + 2);
    assert.match(afterData, /^354 End data with <CR><LF>\.<CR><LF>\r\n250 [^\r\n]*\r\n$/, 'one answer after 354, to the CRLF.CRLF');
    assert.equal(await count(jwt), 1);
    const [stored] = (await api('/api/mails?limit=1&offset=0', { jwt })).json.results as { uuid: string }[];
    const raw = (await api(`/api/mail/${stored!.uuid}`, { jwt })).json.raw as string;
    assert.match(raw, /\nbody\r?\n\.\.?\r?\nQUIT\r?\n/, 'the bare-LF dot and QUIT were stored as lines of the message');
    await healthy();
  });

  it('a DATA line longer than the message size limit gets 552 and nothing is stored; one over twice the limit gets 552 5.3.4 (permanent: it can never fit) and the connection is closed', async () => {
    const { address, jwt } = await createAddress(server);
    const smtp = await openData(server.smtpPort, address);
    // 1.5 MiB in one line, the limit 1 MiB: read to its end and refused.
    const r = await smtp.data(`Subject: long\r\n\r\n${'y'.repeat(1.5 * 1024 * 1024)}\r\n`);
    assert.match(r.text, /^552 5\.3\.4 /);
    await smtp.quit();
    const longer = await openData(server.smtpPort, address);
    assert.match((await longer.data(`Subject: longer\r\n\r\n${'y'.repeat(3 * 1024 * 1024)}\r\n`)).text, /^552 5\.3\.4 /);
    await assert.rejects(longer.command('NOOP'), /closed/, 'the connection is closed');
    await longer.quit();
    assert.equal(await count(jwt), 0);
    await healthy();
  });

  for (const [name, terminator] of [
    ['bare LF before the dot', '\n.\r\n'],
    ['bare CR before the dot', '\r.\r\n'],
    ['bare LF after the dot', '\r\n.\n'],
  ] as const) {
    it(`SMTP smuggling (CVE-2023-51764 class), ${name}: exactly one message is stored, the smuggled one is body text`, async () => {
      const { address, jwt } = await createAddress(server);
      const smuggled = `MAIL FROM:<admin@${DOMAIN}>\r\nRCPT TO:<${address}>\r\nDATA\r\nSubject: smuggled\r\n\r\nevil\r\n`;
      const smtp = await openData(server.smtpPort, address);
      smtp.write(`Subject: outer\r\n\r\nbefore${terminator}${smuggled}\r\n.\r\n`);
      assert.equal((await smtp.reply()).code, 250);
      await smtp.quit();
      const list = await api('/api/mails?limit=10&offset=0', { jwt });
      assert.equal(list.json.count, 1);
      assert.equal(JSON.parse(list.json.results[0].metadata).subject, 'outer');
      const full = await api(`/api/mail/${list.json.results[0].uuid}`, { jwt });
      assert.ok(full.json.raw.includes('Subject: smuggled'), 'the smuggled lines are body text');
    });
  }

  it('a 24 MB JSON body is 413 text/plain on every JSON route, never a 5xx', async () => {
    const body = JSON.stringify({ name: 'x', pad: 'p'.repeat(24 * 1024 * 1024) });
    for (const path of ['/api/new_address', '/api/switch_address']) {
      const res = await api(path, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
      assert.equal(res.status, 413, path);
      assert.match(res.headers.get('content-type') ?? '', /^text\/plain/, path);
    }
    await healthy();
  });

  it('600 concurrent event streams from one client: 100 admitted, the rest 429 with Retry-After, the service answers throughout', async () => {
    const { jwt } = await createAddress(server);
    const streams: EventStream[] = [];
    try {
      const opened = await Promise.all(Array.from({ length: 600 }, () => openEventStream(server.httpUrl, '/api/events', { authorization: `Bearer ${jwt}` })));
      streams.push(...opened);
      const admitted = opened.filter((s) => s.status === 200).length;
      const refused = opened.filter((s) => s.status === 429);
      assert.equal(admitted, 100);
      assert.equal(refused.length, 500);
      assert.ok(refused.every((s) => s.headers['retry-after'] === '5'));
      await healthy();
    } finally {
      streams.forEach((s) => s.close());
    }
    // Once they are closed (the server has seen each one go), a stream is admitted again.
    await untilPushOpen(server, { events: 0 });
    const again = await openEventStream(server.httpUrl, '/api/events', { authorization: `Bearer ${jwt}` });
    again.close();
    assert.equal(again.status, 200);
  });
});
