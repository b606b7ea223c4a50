// Hostile mail over real SMTP (docs/security.md "Parsing"): a message built to
// be slow to parse or to bloat every list answer must neither freeze the service
// nor make an inbox unreadable, and a download must never parse the message again.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { client, createAddress, sendMail, startTestServer, type TestServer } from '../../helpers/harness.js';
import { openEventStream } from '../../helpers/event-stream.js';

/** A multipart/mixed message of `parts` tiny parts. */
function manyParts(parts: number): string {
  const out = ['Subject: many parts', 'Content-Type: multipart/mixed; boundary="b"', '', ''];
  for (let i = 0; i < parts; i++) out.push('--b', `Content-Type: application/octet-stream; name="p${i}.bin"`, '', 'x');
  out.push('--b--', '');
  return out.join('\r\n');
}

/** Attachments whose file names are `nameLength` characters each. */
function longNames(count: number, nameLength: number): string {
  const out = ['Subject: long names', 'Content-Type: multipart/mixed; boundary="b"', '', '--b', 'Content-Type: text/plain', '', 'hello'];
  for (let i = 0; i < count; i++) {
    out.push('--b', `Content-Type: application/octet-stream; name="${String(i).repeat(nameLength)}"`, 'Content-Transfer-Encoding: base64', '', 'AAEC');
  }
  out.push('--b--', '');
  return out.join('\r\n');
}

function deepNesting(depth: number): string {
  const out = ['Subject: deep', `Content-Type: multipart/mixed; boundary="b0"`, ''];
  for (let i = 1; i < depth; i++) out.push(`--b${i - 1}`, `Content-Type: multipart/mixed; boundary="b${i}"`, '');
  out.push(`--b${depth - 1}`, 'Content-Type: text/plain', '', 'bottom');
  for (let i = depth - 1; i >= 0; i--) out.push(`--b${i}--`);
  out.push('');
  return out.join('\r\n');
}

function manyHeaders(count: number): string {
  const out = ['Subject: headers'];
  for (let i = 0; i < count; i++) out.push(`X-H${i}: v`);
  out.push('', 'body', '');
  return out.join('\r\n');
}

describe('hostile mail', { timeout: 120_000 }, () => {
  let server: TestServer;
  let api: ReturnType<typeof client>;
  before(async () => {
    server = await startTestServer();
    api = client(server);
  });
  after(() => server.close());

  /** Sends `raw` while polling /health_check; returns the slowest health answer and the loop delay max. */
  async function deliverWatched(to: string, raw: string) {
    const loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
    let slowest = 0;
    let done = false;
    const poll = (async () => {
      while (!done) {
        const t = performance.now();
        assert.equal((await api('/health_check')).status, 200);
        slowest = Math.max(slowest, performance.now() - t);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const reply = await sendMail(server.smtpPort, { to: [to], message: raw });
    done = true;
    await poll;
    loop.disable();
    // The server runs in this process: its event loop is the one measured here.
    return { reply, slowestHealthMs: slowest, loopMaxMs: loop.max / 1e6 };
  }

  async function newest(jwt: string) {
    const list = await api('/api/mails?limit=100&offset=0', { jwt });
    assert.equal(list.status, 200);
    return { list, item: list.json.results[0], metadata: JSON.parse(list.json.results[0].metadata) };
  }

  for (const [name, raw] of [
    ['40,000 MIME parts', manyParts(40_000)],
    ['3,000-deep nesting', deepNesting(3_000)],
    ['60,000 header lines', manyHeaders(60_000)],
  ] as const) {
    it(`${name}: stored, and the service keeps answering within 1 s`, async () => {
      const { address, jwt } = await createAddress(server);
      const r = await deliverWatched(address, raw);
      assert.equal(r.reply.code, 250);
      assert.ok(r.slowestHealthMs < 1000, `slowest /health_check ${r.slowestHealthMs.toFixed(0)} ms`);
      assert.ok(r.loopMaxMs < 500, `event loop held ${r.loopMaxMs.toFixed(0)} ms at most`);
      const { list, metadata } = await newest(jwt);
      assert.ok(Buffer.byteLength(list.json.results[0].metadata) <= 16 * 1024, 'metadata within 16 KiB');
      if (name.startsWith('40,000')) {
        assert.equal(metadata.attachments.length, 100);
        assert.equal(metadata.attachments_truncated, true);
      }
      const full = await api(`/api/mail/${list.json.results[0].uuid}`, { jwt });
      assert.equal(full.status, 200);
      assert.ok(full.json.raw.endsWith(raw), 'the source is kept whole');
    });
  }

  it('five attachments with 1.8 MB file names (9 MB of headers): past the header limit only the header block is read; list and stream work', async () => {
    const { address, jwt } = await createAddress(server);
    const events = await openEventStream(server.httpUrl, '/api/events', { authorization: `Bearer ${jwt}` });
    try {
      await events.next('ready');
      const r = await sendMail(server.smtpPort, { to: [address], message: longNames(5, 1_800_000) });
      assert.equal(r.code, 250);
      const event = await events.next('mail', 10_000);
      const { list, metadata } = await newest(jwt);
      assert.equal(JSON.parse(event.data).uuid, list.json.results[0].uuid, 'the event reached the stream');
      assert.ok(list.text.length < 20_000, `list answer ${list.text.length} bytes`);
      assert.equal(metadata.subject, 'long names');
      assert.deepEqual(metadata.attachments, []);
      const wait = await api('/api/mails/wait?since=0&timeout=1', { jwt });
      assert.equal(wait.status, 200);
    } finally {
      events.close();
    }
  });

  it('five attachments with 300 KB file names: listed, each name cut to 255 characters', async () => {
    const { address, jwt } = await createAddress(server);
    assert.equal((await sendMail(server.smtpPort, { to: [address], message: longNames(5, 300_000) })).code, 250);
    const { list, metadata } = await newest(jwt);
    assert.ok(list.text.length < 20_000, `list answer ${list.text.length} bytes`);
    assert.equal(metadata.attachments.length, 5);
    assert.deepEqual(
      metadata.attachments.map((a: { filename: string }) => a.filename),
      [0, 1, 2, 3, 4].map((i) => String(i).repeat(255)),
    );
  });

  it('HTML nested 50,000 deep, then 50,000 stray closers: text, code and link read in the parse thread within its budget', async () => {
    // A reader that keeps a stack of open elements and searches it is quadratic here
    // (htmlparser2's Parser: 4.4 s for this nesting); the extractor reads it in milliseconds.
    const { address, jwt } = await createAddress(server);
    const html = `${'<div>'.repeat(50_000)}<p>Your code is 482913</p><a href="https://app.example/verify?t=1">Verify</a>${'</span>'.repeat(50_000)}`;
    const raw = ['Subject: nested', 'Content-Type: text/html; charset=utf-8', '', html, ''].join('\r\n');
    const t = performance.now();
    const r = await deliverWatched(address, raw);
    assert.equal(r.reply.code, 250);
    assert.ok(performance.now() - t < 5000, 'answered within PARSE_TIMEOUT');
    assert.ok(r.loopMaxMs < 500, `event loop held ${r.loopMaxMs.toFixed(0)} ms at most`);
    const { metadata } = await newest(jwt);
    assert.deepEqual(metadata.codes, ['482913']);
    assert.deepEqual(metadata.links, ['https://app.example/verify?t=1']);
  });

  it('a message that outlasts PARSE_TIMEOUT (300,000 parts) is stored with what its header block says', async () => {
    const quick = await startTestServer({ PARSE_TIMEOUT: '500ms' });
    try {
      const { address, jwt } = await createAddress(quick);
      const raw = ['Subject: too many parts', 'Content-Type: multipart/mixed; boundary="b"', '', ...Array.from({ length: 300_000 }, () => '--b\r\n\r\nx'), '--b--', ''].join('\r\n');
      const t = Date.now();
      assert.equal((await sendMail(quick.smtpPort, { to: [address], message: raw })).code, 250);
      assert.ok(Date.now() - t < 5000, 'answered soon after the budget');
      const list = await client(quick)('/api/mails?limit=1&offset=0', { jwt });
      const metadata = JSON.parse(list.json.results[0].metadata);
      assert.equal(metadata.subject, 'too many parts');
      assert.deepEqual(metadata.attachments, []);
      assert.equal((await client(quick)('/health_check')).status, 200);
    } finally {
      await quick.close();
    }
  });

  it('an attachment is served from the bytes kept at delivery, never by parsing the message again', async () => {
    const { address, jwt } = await createAddress(server);
    const content = Buffer.from('%PDF-1.4 attachment bytes \u00ff', 'latin1');
    const raw = [
      'Subject: kept',
      'Content-Type: multipart/mixed; boundary="b"',
      '',
      '--b',
      'Content-Type: text/plain',
      '',
      'see attached',
      '--b',
      'Content-Type: application/pdf; name="doc.pdf"',
      'Content-Transfer-Encoding: base64',
      '',
      content.toString('base64'),
      '--b--',
      '',
    ].join('\r\n');
    assert.equal((await sendMail(server.smtpPort, { to: [address], message: raw })).code, 250);
    const { item } = await newest(jwt);
    // Overwrite the stored message: a parse of it could no longer find the attachment.
    const db = new Database(join(server.dataDir, 'temp-inbox.sqlite'));
    try {
      assert.equal(db.prepare("UPDATE bodies SET data = CAST('Subject: gone' AS BLOB) WHERE id = (SELECT body_id FROM mails WHERE uuid = ?)").run(item.uuid).changes, 1);
    } finally {
      db.close();
    }
    const res = await fetch(`${server.httpUrl}/api/attachment/${item.uuid}/0`, { headers: { authorization: `Bearer ${jwt}` } });
    assert.equal(res.status, 200);
    assert.ok(Buffer.from(await res.arrayBuffer()).equals(content));
    assert.equal(res.headers.get('content-type'), 'application/pdf');
  });
});
