// MessageBuffer (mail/message-buffer.ts) must give back exactly the bytes it was
// given, whatever the chunking and size limit.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { isSharedWhole, LARGE_MESSAGE_BYTES, MessageBuffer } from '../../src/mail/message-buffer.js';
import { createMessageParser } from '../../src/mail/parse/parse.js';

describe('MessageBuffer', () => {
  it('chunks come back byte-exact, for small and large messages (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 200_000 }), { minLength: 0, maxLength: 12 }),
        fc.integer({ min: 1, max: 3 * LARGE_MESSAGE_BYTES }),
        fc.integer({ min: 0, max: 255 }),
        (sizes, maxBytes, seed) => {
          const chunks = sizes.map((n, i) => Buffer.alloc(n, (seed + i * 37) & 0xff));
          // A few distinct bytes at chunk edges catch an off-by-one copy.
          chunks.forEach((c, i) => {
            if (c.length) {
              c[0] = i;
              c[c.length - 1] = 255 - i;
            }
          });
          const m = new MessageBuffer(maxBytes);
          for (const c of chunks) m.push(c);
          assert.equal(m.size, chunks.reduce((a, c) => a + c.length, 0));
          const out = m.take();
          assert.ok(out.equals(Buffer.concat(chunks)));
          assert.equal(m.size, 0, 'empty afterwards');
        },
      ),
      { numRuns: 60 },
    );
  });

  it('a message larger than its declared maximum still comes back whole', () => {
    const m = new MessageBuffer(10);
    const chunks = Array.from({ length: 10 }, (_, i) => Buffer.alloc(100_000, i));
    for (const c of chunks) m.push(c);
    assert.ok(m.take().equals(Buffer.concat(chunks)));
  });

  it('a large message is exactly one shared buffer, which the parser reads in place and leaves intact', async () => {
    const payload = Buffer.alloc(400_000, 7);
    payload.writeUInt32BE(0xdeadbeef, 123_456);
    const b64 = payload.toString('base64').replace(/.{76}/g, '$&\r\n');
    const message = Buffer.from(
      'From: a@example.com\r\nSubject: big\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\nsee attached\r\n' +
        `--b\r\nContent-Type: application/octet-stream; name=x.bin\r\nContent-Transfer-Encoding: base64\r\n\r\n${b64}\r\n--b--\r\n`,
    );
    const m = new MessageBuffer(1024 * 1024);
    for (let at = 0; at < message.length; at += 65_536) m.push(message.subarray(at, at + 65_536));
    const raw = m.take();
    assert.ok(isSharedWhole(raw), 'one SharedArrayBuffer, exactly the message');
    assert.ok(raw.equals(message));
    assert.equal(isSharedWhole(Buffer.from('small')), false);
    const parser = createMessageParser();
    try {
      const parsed = await parser.parse(raw);
      assert.equal(parsed.metadata.subject, 'big');
      assert.equal(parsed.attachments.length, 1);
      assert.ok(parsed.attachments[0]!.content.equals(payload));
      assert.ok(raw.equals(message), 'the SMTP side still holds the whole message');
    } finally {
      await parser.close();
    }
  });
});
