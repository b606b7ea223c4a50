// storage/parts.ts: a message cut into parts as views of it, and joined again into one
// buffer of its size as the parts are read.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { PART_BYTES, partsJoiner, partsOf } from '../../src/storage/parts.js';

describe('partsOf', () => {
  it('cuts at PART_BYTES, views of the bytes (no copy), always at least one part', () => {
    const bytes = randomBytes(2 * PART_BYTES + 7);
    const parts = partsOf(bytes);
    assert.deepEqual(parts.map((p) => p.length), [PART_BYTES, PART_BYTES, 7]);
    assert.equal(parts[1]!.buffer, bytes.buffer, 'a view of the same memory');
    assert.deepEqual(partsOf(Buffer.alloc(0)).map((p) => p.length), [0]);
    assert.equal(partsOf(randomBytes(PART_BYTES)).length, 1);
  });
});

describe('partsJoiner', () => {
  it('joins the pieces, in order, into one buffer of exactly the size given', () => {
    const bytes = randomBytes(2 * PART_BYTES + 7);
    const whole = partsJoiner(bytes.length);
    for (const part of partsOf(bytes)) assert.equal(whole.add(Buffer.from(part)), true);
    assert.ok(whole.done()?.equals(bytes));
  });

  it('has no whole when the pieces fall short of the size (a part missing)', () => {
    const whole = partsJoiner(10);
    whole.add(Buffer.from('12345'));
    assert.equal(whole.done(), undefined);
  });

  it('refuses a piece past the size, and every piece after it, even one that would fit', () => {
    const whole = partsJoiner(10);
    assert.equal(whole.add(Buffer.from('123456')), true);
    assert.equal(whole.add(Buffer.from('123456')), false);
    assert.equal(whole.add(Buffer.from('1234')), false);
    assert.equal(whole.done(), undefined);
  });
});
