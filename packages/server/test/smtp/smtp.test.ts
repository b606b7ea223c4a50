// SMTP protocol rules, scripted as [command, expected code] steps against the
// real receiver; what was stored is read back through the HTTP API.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createTombstones } from '../../src/domain/tombstones.js';
import { openSqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import { apiText, client, createAddress, DOMAIN, message, receivedBlock, sendMail, SmtpClient, startTestServer, storedBytes, type TestServer } from '../helpers/harness.js';

/** The JWT_SECRET the server generated and kept in its data dir (config/secrets.ts). */
const secretsOf = (server: TestServer) => JSON.parse(readFileSync(join(server.dataDir, 'secrets.json'), 'utf8')) as { jwtSecret: string };

/** The EHLO keywords, one per line after the greeting line (RFC 5321 §4.1.1.1). */
function ehloKeywords(text: string): string[] {
  return text
    .split('\r\n')
    .filter(Boolean)
    .slice(1)
    .map((line) => line.slice(4));
}

const DEFAULT_MAX_MESSAGE_BYTES = 10485760;

describe('smtp: protocol rules', () => {
  let server: TestServer;
  let api: ReturnType<typeof client>;
  before(async () => {
    server = await startTestServer();
    api = client(server);
  });
  after(() => server.close());

  const list = (jwt: string) => api('/api/mails?limit=100&offset=0', { jwt });
  const count = async (jwt: string) => (await list(jwt)).json.count as number;

  it('EHLO advertises SIZE, PIPELINING, 8BITMIME, ENHANCEDSTATUSCODES; no STARTTLS without a cert, no AUTH', async () => {
    const smtp = await SmtpClient.connect(server.smtpPort);
    const [ehlo] = await smtp.script([['EHLO client.test', 250]]);
    const keywords = ehloKeywords(ehlo!.text);
    for (const k of [`SIZE ${DEFAULT_MAX_MESSAGE_BYTES}`, 'PIPELINING', '8BITMIME', 'ENHANCEDSTATUSCODES']) assert.ok(keywords.includes(k), `${k} in ${keywords.join(', ')}`);
    assert.ok(!keywords.some((k) => /^STARTTLS\b/i.test(k)), 'no STARTTLS');
    assert.ok(!keywords.some((k) => /^AUTH\b/i.test(k)), 'no AUTH');
    // Neither is offered, so each is an unknown command (RFC 5321 §4.2.4).
    assert.equal((await smtp.command('STARTTLS')).text, '500 5.5.2 Error: command not recognized\r\n', 'STARTTLS is refused');
    assert.equal((await smtp.command('AUTH PLAIN AGxvZ2luAHBhc3M=')).text, '500 5.5.2 Error: command not recognized\r\n', 'AUTH is refused');
    await smtp.quit();
  });

  it('MAIL FROM with a parameter of no extension offered gets 555 5.5.4 (RFC 5321 §4.1.1.11); those of SIZE, 8BITMIME, SMTPUTF8 and AUTH= are taken', async () => {
    const { address, jwt } = await createAddress(server);
    const smtp = await SmtpClient.connect(server.smtpPort);
    await smtp.script([['EHLO client.test', 250]]);
    for (const params of ['FOO=BAR', 'SIZE=100 X-TRACE=1', 'NOTIFY=NEVER']) {
      const refused = await smtp.command(`MAIL FROM:<a@example.org> ${params}`);
      assert.match(refused.text, /^555 5\.5\.4 MAIL FROM parameter \S+ is not recognized/, params);
    }
    await smtp.script([
      ['MAIL FROM:<a@example.org> SIZE=100 BODY=8BITMIME SMTPUTF8 AUTH=<>', 250],
      [`RCPT TO:<${address}>`, 250],
      ['DATA', 354],
    ]);
    assert.equal((await smtp.data(message({ Subject: 'params' }, 'x'))).code, 250);
    await smtp.quit();
    assert.equal(await count(jwt), 1);
  });

  it('refuses an unknown local part and a foreign domain with 550 5.1.1 at RCPT (docs/decisions.md "SMTP")', async () => {
    const smtp = await SmtpClient.connect(server.smtpPort);
    await smtp.script([
      ['EHLO client.test', 250],
      ['MAIL FROM:<s@example.org>', 250],
    ]);
    for (const rcpt of [`nobody-here@${DOMAIN}`, 'someone@example.com', `x@sub.${DOMAIN}`, 'postmaster@example.com']) {
      const r = await smtp.command(`RCPT TO:<${rcpt}>`);
      assert.equal(r.code, 550, rcpt);
      assert.match(r.text, /^550 5\.1\.1 /, r.text);
    }
    // No valid recipient: there is nothing to send data to (RFC 5321 §3.3).
    assert.equal((await smtp.command('DATA')).text, '503 5.5.1 Error: need RCPT command\r\n');
    await smtp.quit();
  });

  it('matches recipients case-insensitively: RCPT TO:<Bob@TEMP-INBOX.LOCALHOST> reaches bob@…', async () => {
    const { jwt } = await createAddress(server, { name: 'bob' });
    const smtp = await SmtpClient.connect(server.smtpPort);
    await smtp.script([
      ['EHLO client.test', 250],
      ['MAIL FROM:<s@example.org>', 250],
      [`RCPT TO:<Bob@${DOMAIN.toUpperCase()}>`, 250],
      ['DATA', 354],
    ]);
    assert.equal((await smtp.data(message({ Subject: 'case' }, 'x'))).code, 250);
    await smtp.quit();
    const res = await list(jwt);
    assert.equal(res.json.count, 1);
    assert.equal(res.json.results[0].address, `bob@${DOMAIN}`);
  });

  it('delivers only to the accepted recipients of a mixed envelope', async () => {
    const a = await createAddress(server, { name: 'mixed-a' });
    const gone = await createAddress(server, { name: 'mixed-gone' });
    await api('/api/delete_address', { method: 'DELETE', jwt: gone.jwt });
    const smtp = await SmtpClient.connect(server.smtpPort);
    await smtp.script([
      ['EHLO client.test', 250],
      ['MAIL FROM:<s@example.org>', 250],
      [`RCPT TO:<nobody@${DOMAIN}>`, 550],
      [`RCPT TO:<${a.address}>`, 250],
      [`RCPT TO:<${gone.address}>`, 550],
      ['RCPT TO:<a@example.com>', 550],
      ['DATA', 354],
    ]);
    const done = await smtp.data(message({ Subject: 'mixed' }, 'x'));
    assert.equal(done.code, 250);
    await smtp.quit();
    const res = await list(a.jwt);
    assert.equal(res.json.count, 1);
    const raw: string = (await api(`/api/mail/${res.json.results[0].uuid}`, { jwt: a.jwt })).json.raw;
    assert.match(raw, new RegExp(`for <${a.address}>`));
    // Its name is retired (docs/decisions.md "Deleted address"): freed here by a second connection, to look inside.
    const other = openSqliteStore(join(server.dataDir, 'temp-inbox.sqlite'));
    try {
      assert.equal(await other.purgeTombstones({ key: createTombstones(secretsOf(server).jwtSecret, 0).keyOf(gone.address) }), 1);
    } finally {
      await other.close();
    }
    const again = await createAddress(server, { name: 'mixed-gone' });
    assert.equal(await count(again.jwt), 0, 'nothing was stored for the refused, deleted address');
  });

  it('the same recipient twice (in any case) gets one copy', async () => {
    const { address, jwt } = await createAddress(server, { name: 'dup' });
    const smtp = await SmtpClient.connect(server.smtpPort);
    await smtp.script([
      ['EHLO client.test', 250],
      ['MAIL FROM:<s@example.org>', 250],
      [`RCPT TO:<${address}>`, 250],
      [`RCPT TO:<${address}>`, 250],
      [`RCPT TO:<${address.toUpperCase()}>`, 250],
      ['DATA', 354],
    ]);
    assert.equal((await smtp.data(message({ Subject: 'dup' }, 'x'))).code, 250);
    await smtp.quit();
    assert.equal(await count(jwt), 1);
  });

  it('two valid recipients each get their own copy', async () => {
    const a = await createAddress(server, { name: 'copy-a' });
    const b = await createAddress(server, { name: 'copy-b' });
    await sendMail(server.smtpPort, { to: [a.address, b.address], message: message({ Subject: 'both', 'Message-ID': '<both@test>' }, 'x') });
    const [la, lb] = [(await list(a.jwt)).json, (await list(b.jwt)).json];
    assert.equal(la.count, 1);
    assert.equal(lb.count, 1);
    assert.notEqual(la.results[0].uuid, lb.results[0].uuid);
    assert.equal(la.results[0].address, a.address);
    assert.equal(lb.results[0].address, b.address);
    assert.equal(la.results[0].message_id, '<both@test>');
    assert.equal(lb.results[0].message_id, '<both@test>');
    // Each copy carries its own trace line naming its recipient (RFC 5321 §4.4).
    assert.match((await api(`/api/mail/${la.results[0].uuid}`, { jwt: a.jwt })).json.raw, new RegExp(`^Received: [^]*?for <${a.address}>`));
    assert.match((await api(`/api/mail/${lb.results[0].uuid}`, { jwt: b.jwt })).json.raw, new RegExp(`^Received: [^]*?for <${b.address}>`));
    // One inbox deleting its copy leaves the other's alone.
    await api(`/api/mails/${la.results[0].uuid}`, { method: 'DELETE', jwt: a.jwt });
    assert.equal(await count(b.jwt), 1);
  });

  it('the 101st recipient gets 452 4.5.3; the first 100 are delivered (RFC 5321 §4.5.3.1.8)', async () => {
    const boxes: { address: string; jwt: string }[] = [];
    for (let i = 0; i < 101; i++) boxes.push(await createAddress(server, { name: `many${i}` }));
    const smtp = await SmtpClient.connect(server.smtpPort);
    await smtp.script([
      ['EHLO client.test', 250],
      ['MAIL FROM:<s@example.org>', 250],
      ...boxes.slice(0, 100).map((b): [string, number] => [`RCPT TO:<${b.address}>`, 250]),
    ]);
    const refused = await smtp.command(`RCPT TO:<${boxes[100]!.address}>`);
    assert.equal(refused.code, 452);
    assert.match(refused.text, /^452 4\.5\.3 /);
    await smtp.script([['DATA', 354]]);
    assert.equal((await smtp.data(message({ Subject: 'many' }, 'x'))).code, 250);
    await smtp.quit();
    for (const b of boxes.slice(0, 100)) assert.equal(await count(b.jwt), 1, b.address);
    assert.equal(await count(boxes[100]!.jwt), 0);
  });

  it('accepts the null sender MAIL FROM:<>; source is the From: address', async () => {
    const { address, jwt } = await createAddress(server, { name: 'nullsender' });
    const smtp = await SmtpClient.connect(server.smtpPort);
    await smtp.script([
      ['EHLO client.test', 250],
      ['MAIL FROM:<>', 250],
      [`RCPT TO:<${address}>`, 250],
      ['DATA', 354],
    ]);
    assert.equal((await smtp.data(message({ From: '"Mail Delivery System" <MAILER-DAEMON@mx.example.org>', Subject: 'Undelivered Mail' }, 'bounce'))).code, 250);
    await smtp.quit();
    const item = (await list(jwt)).json.results[0];
    assert.equal(item.source, 'MAILER-DAEMON@mx.example.org');
  });

  it('PIPELINING: MAIL, RCPTs and DATA in one write get their replies in order (RFC 2920)', async () => {
    const a = await createAddress(server, { name: 'pipe-a' });
    const b = await createAddress(server, { name: 'pipe-b' });
    const smtp = await SmtpClient.connect(server.smtpPort);
    await smtp.script([['EHLO client.test', 250]]);
    smtp.write(['MAIL FROM:<p@example.org>', `RCPT TO:<${a.address}>`, `RCPT TO:<nobody@${DOMAIN}>`, `RCPT TO:<${b.address}>`, 'DATA', ''].join('\r\n'));
    const codes = [];
    for (let i = 0; i < 5; i++) codes.push((await smtp.reply()).code);
    assert.deepEqual(codes, [250, 250, 550, 250, 354]);
    assert.equal((await smtp.data(message({ Subject: 'pipelined' }, 'x'))).code, 250);
    // A second pipelined transaction on the same connection.
    smtp.write(['RSET', 'MAIL FROM:<p2@example.org>', `RCPT TO:<${a.address}>`, 'DATA', ''].join('\r\n'));
    const codes2 = [];
    for (let i = 0; i < 4; i++) codes2.push((await smtp.reply()).code);
    assert.deepEqual(codes2, [250, 250, 250, 354]);
    assert.equal((await smtp.data(message({ Subject: 'pipelined 2' }, 'y'))).code, 250);
    await smtp.quit();
    assert.equal(await count(a.jwt), 2);
    assert.equal(await count(b.jwt), 1);
    assert.equal((await list(a.jwt)).json.results[1].source, 'p@example.org');
    assert.equal((await list(a.jwt)).json.results[0].source, 'p2@example.org');
  });

  it('HELO (plain SMTP) also delivers', async () => {
    const { address, jwt } = await createAddress(server, { name: 'helo' });
    const smtp = await SmtpClient.connect(server.smtpPort);
    await smtp.script([
      ['HELO old.client.test', 250],
      ['MAIL FROM:<old@example.org>', 250],
      [`RCPT TO:<${address}>`, 250],
      ['DATA', 354],
    ]);
    assert.equal((await smtp.data(message({ Subject: 'helo' }, 'x'))).code, 250);
    await smtp.quit();
    const raw: string = (await api(`/api/mail/${(await list(jwt)).json.results[0].uuid}`, { jwt })).json.raw;
    assert.match(raw, /^Received: from old\.client\.test /);
  });

  describe('malformed MIME is stored, listable and readable; the server stays healthy', () => {
    const crlf = (lines: string[]) => lines.join('\r\n') + '\r\n';
    const nested = (depth: number) => {
      let part = 'Content-Type: text/plain\r\n\r\ninnermost text\r\n';
      for (let i = depth; i >= 1; i--) part = `Content-Type: multipart/mixed; boundary="b${i}"\r\n\r\n--b${i}\r\n${part}--b${i}--\r\n`;
      return `Subject: nested ${depth}\r\nMIME-Version: 1.0\r\n${part}`;
    };
    const cases: [string, Buffer][] = [
      [
        'broken boundaries',
        Buffer.from(
          crlf([
            'Subject: broken boundaries',
            'MIME-Version: 1.0',
            'Content-Type: multipart/mixed; boundary="declared"',
            '',
            '--other',
            'Content-Type: text/plain',
            '',
            'part under an undeclared boundary',
            '--declared',
            'Content-Type: multipart/alternative; boundary="inner"',
            '',
            '--inner',
            'Content-Type: text/plain',
            '',
            'never closed',
          ]),
        ),
      ],
      [
        'truncated base64',
        Buffer.from(
          crlf([
            'Subject: truncated base64',
            'MIME-Version: 1.0',
            'Content-Type: multipart/mixed; boundary="b"',
            '',
            '--b',
            'Content-Type: application/octet-stream',
            'Content-Transfer-Encoding: base64',
            'Content-Disposition: attachment; filename="cut.bin"',
            '',
            'SGVsbG8gV29ybGQhIFRoaXMgaXMgY3V0',
            'SGVsbG8gV2!!!*==x',
            '--b',
            'Content-Type: text/plain',
            'Content-Transfer-Encoding: base64',
            '',
            'SGV',
          ]),
        ),
      ],
      ['a header line without a colon', Buffer.from(crlf(['Subject: no colon', 'This header has no colon', 'X-Ok: yes', '', 'body']))],
      ['a 500 KB single header line', Buffer.from(crlf(['Subject: long header', `X-Long: ${'a'.repeat(500 * 1024)}`, '', 'body']))],
      ['60 levels of nested multipart', Buffer.from(nested(60))],
      ['200 levels of nested multipart', Buffer.from(nested(200))],
      ['NUL bytes in headers and body', Buffer.from(crlf(['Subject: nul\u0000byte', 'X-Nul: a\u0000b', '', 'body \u0000 with \u0000\u0000 NULs']))],
      [
        'invalid UTF-8 in the subject and body',
        Buffer.concat([Buffer.from('Subject: bad '), Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0x80]), Buffer.from('\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n'), Buffer.from([0xe2, 0x82, 0x0d, 0x0a])]),
      ],
      ['an encoded word with an unknown charset', Buffer.from(crlf(['Subject: =?x-unknown-charset?B?SGVsbG8=?= =?UTF-8?Q?broken=ZZ?=', '', 'x']))],
      ['headers only, no body separator', Buffer.from(crlf(['Subject: headers only', 'From: nobody']))],
      ['an empty message', Buffer.alloc(0)],
      ['a bare LF message', Buffer.from('Subject: bare lf\nContent-Type: text/plain\n\nline one\nline two\n')],
    ];

    for (const [name, bytes] of cases) {
      it(name, async () => {
        const { address, jwt } = await createAddress(server, {});
        const smtp = await SmtpClient.connect(server.smtpPort);
        await smtp.script([
          ['EHLO client.test', 250],
          ['MAIL FROM:<fuzz@example.org> BODY=8BITMIME', 250],
          [`RCPT TO:<${address}>`, 250],
          ['DATA', 354],
        ]);
        // reply() throws if the connection is dropped instead of answered. Every one of
        // these is taken whole: malformed MIME is the reader's problem, not a reason to refuse.
        const done = await smtp.data(bytes);
        assert.equal(done.text, '250 2.6.0 Ok: stored 1 copy\r\n');
        // The connection is still usable after the reply.
        assert.equal((await smtp.command('NOOP')).code, 250);
        await smtp.quit();
        const res = await list(jwt);
        assert.equal(res.status, 200, res.text);
        assert.equal(res.json.count, 1, 'listed as soon as SMTP answered 250');
        const item = res.json.results[0];
        const meta = JSON.parse(item.metadata);
        assert.equal(typeof meta.subject, 'string');
        assert.equal(typeof meta.preview, 'string');
        assert.ok(Array.isArray(meta.attachments) && Array.isArray(meta.codes) && Array.isArray(meta.links) && Array.isArray(meta.to));
        // Past the parser's nesting limit the header block alone is still read.
        const subject = /^Subject: (nested \d+)/.exec(bytes.toString('latin1'))?.[1];
        if (subject) assert.equal(meta.subject, subject);
        const full = await api(`/api/mail/${item.uuid}`, { jwt });
        assert.equal(full.status, 200, full.text);
        // Stored byte for byte behind its Received: line; the size counts both.
        const stored = storedBytes(bytes);
        const raw: string = full.json.raw;
        assert.ok(raw.endsWith(apiText(stored)), 'the bytes sent are stored as sent');
        assert.equal(meta.size, receivedBlock(raw).length + stored.length, 'size: the bytes sent and the Received: line');
        for (const a of meta.attachments as { id: string }[]) {
          const att = await api(`/api/attachment/${item.uuid}/${a.id}`, { jwt });
          assert.ok(att.status === 200, `attachment ${a.id}: ${att.status}`);
        }
      });
    }

    it('the raw of a message with invalid UTF-8 keeps every byte (one character per byte)', async () => {
      const { address, jwt } = await createAddress(server, {});
      const bytes = Buffer.concat([Buffer.from('Subject: bytes '), Buffer.from([0xff, 0xfe, 0x80, 0xc3]), Buffer.from('\r\n\r\nbody\r\n')]);
      await sendMail(server.smtpPort, { to: [address], message: bytes });
      const { raw } = (await api(`/api/mail/${(await list(jwt)).json.results[0].uuid}`, { jwt })).json;
      assert.deepEqual(Buffer.from(raw as string, 'latin1').subarray(-bytes.length), bytes);
    });

    it('health_check is still 200 afterwards', async () => {
      const res = await api('/health_check');
      assert.equal(res.status, 200);
      assert.equal(res.json.status, 'ok');
    });
  });
});

describe('smtp: MAX_MESSAGE_BYTES=2000', () => {
  let server: TestServer;
  before(async () => (server = await startTestServer({ MAX_MESSAGE_BYTES: '2000' })));
  after(() => server.close());

  /** A message of exactly n bytes. */
  const sized = (n: number) => {
    const head = 'Subject: sized\r\n\r\n';
    return head + 'x'.repeat(n - head.length - 2) + '\r\n';
  };

  it('advertises SIZE 2000', async () => {
    const smtp = await SmtpClient.connect(server.smtpPort);
    const [ehlo] = await smtp.script([['EHLO client.test', 250]]);
    assert.ok(ehloKeywords(ehlo!.text).includes('SIZE 2000'), ehlo!.text);
    await smtp.quit();
  });

  it('refuses a declared SIZE over the limit with 552 5.3.4 and a larger DATA with 552 5.3.4; nothing is stored; the connection goes on (RFC 1870)', async () => {
    const { address, jwt } = await createAddress(server, {});
    const api = client(server);
    const smtp = await SmtpClient.connect(server.smtpPort);
    await smtp.script([['EHLO client.test', 250]]);
    const declared = await smtp.command('MAIL FROM:<a@b.example> SIZE=5000');
    assert.equal(declared.code, 552);
    assert.match(declared.text, /^552 5\.3\.4 /);

    await smtp.script([
      ['MAIL FROM:<a@b.example>', 250],
      [`RCPT TO:<${address}>`, 250],
      ['DATA', 354],
    ]);
    const big = await smtp.data(sized(3000));
    assert.equal(big.code, 552);
    assert.match(big.text, /^552 5\.3\.4 /);
    assert.equal((await api('/api/mails?limit=10&offset=0', { jwt })).json.count, 0, 'nothing stored');

    await smtp.script([
      ['MAIL FROM:<a@b.example> SIZE=100', 250],
      [`RCPT TO:<${address}>`, 250],
      ['DATA', 354],
    ]);
    assert.equal((await smtp.data(message({ Subject: 'small' }, 'fits'))).code, 250);
    await smtp.quit();
    const res = await api('/api/mails?limit=10&offset=0', { jwt });
    assert.equal(res.json.count, 1);
    assert.equal(JSON.parse(res.json.results[0].metadata).subject, 'small');
  });

  it('the limit is inclusive: exactly 2000 bytes is accepted, 2001 refused', async () => {
    const { address, jwt } = await createAddress(server, {});
    const smtp = await SmtpClient.connect(server.smtpPort);
    await smtp.script([
      ['EHLO client.test', 250],
      ['MAIL FROM:<a@b.example> SIZE=2000', 250],
      [`RCPT TO:<${address}>`, 250],
      ['DATA', 354],
    ]);
    assert.equal((await smtp.data(sized(2000))).code, 250);
    await smtp.script([
      ['MAIL FROM:<a@b.example>', 250],
      [`RCPT TO:<${address}>`, 250],
      ['DATA', 354],
    ]);
    assert.equal((await smtp.data(sized(2001))).code, 552);
    await smtp.quit();
    const res = await client(server)('/api/mails?limit=10&offset=0', { jwt });
    assert.equal(res.json.count, 1);
    const raw: string = (await client(server)(`/api/mail/${res.json.results[0].uuid}`, { jwt })).json.raw;
    assert.equal(JSON.parse(res.json.results[0].metadata).size, 2000 + receivedBlock(raw).length, 'size counts the 2000 bytes sent and the Received: line');
  });
});

describe('smtp: a multi-megabyte message', () => {
  let server: TestServer;
  before(async () => (server = await startTestServer()));
  after(() => server.close());

  it('to two recipients: raw byte-exact for each, attachment sizes in the metadata equal the downloaded bytes', async () => {
    const a = await createAddress(server, {});
    const b = await createAddress(server, {});
    const api = client(server);
    // 6 MB of attachment bytes (not a multiple of 3, so base64 ends in padding) and a text part.
    const pdf = Buffer.alloc(6 * 1024 * 1024 + 1);
    for (let i = 0; i < pdf.length; i++) pdf[i] = (i * 7919 + (i >> 11)) & 0xff;
    const csv = Buffer.from('a,b\r\n1,2\r\n'.repeat(50_000));
    const crlf = (...l: string[]) => l.join('\r\n') + '\r\n';
    const body =
      crlf('From: Big <big@example.com>', `To: ${a.address}, ${b.address}`, 'Subject: big one', 'MIME-Version: 1.0', 'Content-Type: multipart/mixed; boundary="BIG"', '') +
      crlf('--BIG', 'Content-Type: text/plain; charset=utf-8', '', 'Your code is 771203') +
      crlf('--BIG', 'Content-Type: application/pdf; name="report.pdf"', 'Content-Transfer-Encoding: base64', 'Content-Disposition: attachment; filename="report.pdf"', '') +
      pdf.toString('base64').replace(/.{76}/g, '$&\r\n') +
      '\r\n' +
      crlf('--BIG', 'Content-Type: text/csv; name="data.csv"', 'Content-Transfer-Encoding: base64', 'Content-Disposition: attachment; filename="data.csv"', '') +
      csv.toString('base64').replace(/.{76}/g, '$&\r\n') +
      '\r\n' +
      crlf('--BIG--');
    const res = await sendMail(server.smtpPort, { to: [a.address, b.address], message: body });
    assert.equal(res.code, 250, res.text);
    for (const { jwt } of [a, b]) {
      const list = await api('/api/mails?limit=10&offset=0', { jwt });
      assert.equal(list.json.count, 1);
      const item = list.json.results[0];
      const meta = JSON.parse(item.metadata);
      assert.deepEqual(meta.codes, ['771203']);
      assert.deepEqual(
        meta.attachments.map((x: { filename: string; size: number }) => [x.filename, x.size]),
        [
          ['report.pdf', pdf.length],
          ['data.csv', csv.length],
        ],
      );
      const full = await api(`/api/mail/${item.uuid}`, { jwt });
      assert.equal(full.status, 200);
      const raw: string = full.json.raw;
      assert.match(raw, /^Received: /);
      assert.ok(raw.endsWith(body), 'the message follows its Received: line byte-exactly');
      assert.equal(meta.size, Buffer.byteLength(body) + receivedBlock(raw).length, 'size: the bytes sent and the Received: line');
      const download = await fetch(`${server.httpUrl}/api/attachment/${item.uuid}/0`, { headers: { authorization: `Bearer ${jwt}` } });
      assert.equal(download.status, 200);
      assert.ok(Buffer.from(await download.arrayBuffer()).equals(pdf), 'the attachment decodes to the original bytes');
    }
  });
});
