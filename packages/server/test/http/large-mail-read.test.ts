// A large mail read through GET /api/mail/{uuid} is written as a stream (http/raw-json.ts):
// the same JSON as a small one's, its raw text decoded and escaped a chunk at a time,
// whatever falls on a chunk's edge (a UTF-8 sequence, a surrogate pair, an escape).
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { text } from 'node:stream/consumers';
import { apiText, createAddress, receivedBlock, request, sendMail, startTestServer, storedBytes, type TestServer } from '../helpers/harness.js';
import { RAW_CHUNK_BYTES, withRawStreamed } from '../../src/http/raw-json.js';

/** `size` bytes of text whose multi-byte characters and escapes straddle every chunk edge. */
function awkward(size: number, pieces = ['a', 'ä', '漢', '😀', '"', '\\', '\r\n', '\t', '\u2028', '</script>']): Buffer {
  const parts: Buffer[] = [];
  let n = 0;
  for (let i = 0; n < size; i++) {
    const b = Buffer.from(pieces[i % pieces.length]!);
    parts.push(b);
    n += b.length;
  }
  return Buffer.concat(parts);
}

describe('a large mail as a stream of JSON', () => {
  it('reads back as the same object, for UTF-8 that straddles every chunk edge and for bytes that are not UTF-8', async () => {
    const cases: [string, Buffer][] = [
      ['UTF-8, every piece over every edge', awkward(3 * RAW_CHUNK_BYTES + 17)],
      // Shifted by one byte so that the 4-byte emoji and the 3-byte 漢 meet the edges at each offset.
      ...[1, 2, 3].map((shift): [string, Buffer] => [`UTF-8 shifted ${shift}`, Buffer.concat([Buffer.alloc(shift, 0x41), awkward(2 * RAW_CHUNK_BYTES)])]),
      ['not UTF-8 (latin1 bytes)', Buffer.concat([awkward(RAW_CHUNK_BYTES), Buffer.from([0xe9, 0x80, 0xff]), awkward(RAW_CHUNK_BYTES)])],
      ['a message of exactly one chunk', Buffer.alloc(RAW_CHUNK_BYTES, 0x61)],
    ];
    for (const [name, raw] of cases) {
      const fields = { id: 7, uuid: 'u', metadata: '{"subject":"\\"raw\\":\\"\\""}', raw: '' };
      const streamed = await text(withRawStreamed(JSON.stringify(fields), raw));
      assert.deepEqual(JSON.parse(streamed), { ...fields, raw: apiText(raw) }, name);
    }
  });

  it('refuses JSON without an empty raw field (a bug, never a malformed answer)', () => {
    assert.throws(() => withRawStreamed('{"id":1}', Buffer.from('x')), /no empty raw field/);
  });

  it('streams into another field by name (mail.tm\'s source has it as data)', async () => {
    const raw = awkward(2 * RAW_CHUNK_BYTES + 5);
    const fields = { id: 'u', downloadUrl: '/x', data: '' };
    assert.deepEqual(JSON.parse(await text(withRawStreamed(JSON.stringify(fields), raw, 'data'))), { ...fields, data: apiText(raw) });
  });

  it('hands the event loop back after every chunk, however fast it is read', async () => {
    const chunks = 12;
    let turns = 0;
    let done = false;
    const tick = () => {
      turns++;
      if (!done) setImmediate(tick);
    };
    setImmediate(tick);
    await text(withRawStreamed('{"raw":""}', Buffer.alloc(chunks * RAW_CHUNK_BYTES, 0x01)));
    done = true;
    assert.ok(turns >= chunks, `${turns} turns of the event loop while ${chunks} chunks were written`);
  });
});

describe('GET /api/mail/{uuid} of a large mail', () => {
  let server: TestServer;
  after(async () => server?.close());

  it('is streamed (no Content-Length) and equals the stored message, as small mail is answered whole', async () => {
    server = await startTestServer();
    const { address, jwt } = await createAddress(server, { name: 'large-read' });
    const header = `From: a@example.com\r\nTo: ${address}\r\nSubject: large\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n`;
    // Lines of awkward text, none starting with a dot, under 998 bytes.
    const line = awkward(700).toString('utf8').replace(/\r\n/g, ' ');
    const utf8Body = Array.from({ length: 900 }, () => line).join('\r\n');
    const latin1Body = Buffer.concat([Buffer.from(utf8Body), Buffer.from('\r\nCaf\xe9\r\n', 'latin1')]);
    const sent = [Buffer.from(header + utf8Body), Buffer.concat([Buffer.from(header), latin1Body]), Buffer.from(`${header}small\r\n`)];
    for (const message of sent) await sendMail(server.smtpPort, { to: [address], message });
    const list = await request(server.httpUrl, '/api/mails?limit=10&offset=0', { jwt });
    const uuids = (list.json.results as { uuid: string }[]).map((m) => m.uuid).reverse();
    for (const [i, message] of sent.entries()) {
      const res = await fetch(`${server.httpUrl}/api/mail/${uuids[i]}`, { headers: { authorization: `Bearer ${jwt}` } });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8');
      const large = message.length > 256 * 1024;
      assert.equal(res.headers.get('content-length') === null, large, large ? 'streamed' : 'answered whole');
      const mail = (await res.json()) as { raw: string; uuid: string; address: string };
      assert.equal(mail.uuid, uuids[i]);
      assert.equal(mail.address, address);
      const trace = receivedBlock(mail.raw);
      assert.equal(mail.raw, trace + apiText(storedBytes(message)), `mail ${i}: the stored message exactly`);
    }
  });
});

describe('reading a 10 MB message that escapes to six times its size', () => {
  let server: TestServer;
  after(async () => server?.close());

  it('never holds the event loop, through GET /api/mail/{uuid} nor /mailtm/sources/{id}, four readers at once', async () => {
    server = await startTestServer();
    const { address, jwt } = await createAddress(server, { name: 'escapes' });
    // Bytes below 0x20 are each \u00XX in JSON, and the message is not UTF-8 (0xff): read as latin1.
    const line = `${'\u0001'.repeat(997)}\r\n`;
    const body = Buffer.concat([Buffer.from(line.repeat(10_000), 'latin1'), Buffer.from([0xff, 0x0d, 0x0a])]);
    const message = Buffer.concat([Buffer.from(`From: a@example.com\r\nTo: ${address}\r\nSubject: escapes\r\n\r\n`), body]);
    await sendMail(server.smtpPort, { to: [address], message });
    const uuid = (await request(server.httpUrl, '/api/mails?limit=1&offset=0', { jwt })).json.results[0].uuid as string;
    for (const path of [`/api/mail/${uuid}`, `/mailtm/sources/${uuid}`]) {
      const read = async () => {
        const res = await fetch(`${server.httpUrl}${path}`, { headers: { authorization: `Bearer ${jwt}`, accept: 'application/json' } });
        return { status: res.status, length: res.headers.get('content-length'), res };
      };
      // The readers count bytes only: parsing 60 MB of JSON here would hold this thread itself.
      const loop = monitorEventLoopDelay({ resolution: 5 });
      loop.enable();
      const sizes = await Promise.all(
        Array.from({ length: 4 }, async () => {
          const { status, length, res } = await read();
          let bytes = 0;
          for await (const chunk of res.body!) bytes += (chunk as Uint8Array).length;
          return { status, length, bytes };
        }),
      );
      loop.disable();
      const whole = await read();
      const json = (await whole.res.json()) as { raw?: string; data?: string };
      const text = json.raw ?? json.data ?? '';
      assert.equal(text, receivedBlock(text) + apiText(storedBytes(message)), path);
      const expected = Buffer.byteLength(JSON.stringify(json));
      for (const a of sizes) assert.deepEqual(a, { status: 200, length: null, bytes: expected }, `${path} is streamed, whole`);
      // About 60 MB of JSON each; built whole on the server's thread it held it 0.3-1.3 s per reader.
      const maxMs = loop.max / 1e6;
      assert.ok(maxMs < 200, `${path}: the event loop was held ${maxMs.toFixed(0)} ms`);
    }
  });
});
