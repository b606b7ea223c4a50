// MessageBuffer (mail/message-buffer.ts) must give back exactly the bytes it was
// given, whatever the chunking and size limit.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { LARGE_MESSAGE_BYTES, MessageBuffer } from '../src/mail/message-buffer.js';

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
});
