// The parser workers' Blob (mail/parse/concat-blob.ts) gives the same bytes, size and
// type as Node's Blob for every kind of part postal-mime passes it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ConcatBlob } from '../../../src/mail/parse/concat-blob.js';

type Part = { kind: 'string'; value: string } | { kind: 'view'; value: Uint8Array; from: number; to: number } | { kind: 'buffer'; value: Uint8Array };

const part: fc.Arbitrary<Part> = fc.oneof(
  // The line break postal-mime adds after every line, which ConcatBlob encodes once for all blobs.
  fc.constant({ kind: 'string' as const, value: '\n' }),
  fc.record({ kind: fc.constant('string' as const), value: fc.string({ unit: 'binary', maxLength: 40 }) }),
  fc.uint8Array({ maxLength: 64 }).chain((value) =>
    fc.record({ kind: fc.constant('view' as const), value: fc.constant(value), from: fc.nat(value.length), to: fc.nat(value.length) }),
  ),
  fc.record({ kind: fc.constant('buffer' as const), value: fc.uint8Array({ maxLength: 64 }) }),
);

function realise(p: Part): string | ArrayBuffer | Uint8Array {
  if (p.kind === 'string') return p.value;
  if (p.kind === 'buffer') return p.value.slice().buffer;
  // A view into a larger buffer, as postal-mime's lines are.
  return p.value.subarray(Math.min(p.from, p.to), Math.max(p.from, p.to));
}

describe('ConcatBlob', () => {
  it('matches Blob byte for byte, in size and type, for any strings, ArrayBuffers and views', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(part, { maxLength: 20 }), fc.string({ maxLength: 12 }), async (parts, type) => {
        const native = new Blob(parts.map(realise) as BlobPart[], { type });
        const ours = new ConcatBlob(parts.map(realise), { type });
        assert.equal(ours.size, native.size);
        assert.equal(ours.type, native.type);
        assert.deepEqual(new Uint8Array(await ours.arrayBuffer()), new Uint8Array(await native.arrayBuffer()));
        assert.equal(await ours.text(), await native.text());
      }),
      { numRuns: 300 },
    );
  });

  it('takes another ConcatBlob as a part, and reads as a Blob to Object.prototype.toString', async () => {
    const inner = new ConcatBlob(['ab', new Uint8Array([0x63])]);
    const outer = new ConcatBlob([inner, '\n', inner]);
    assert.equal(await outer.text(), 'abc\nabc');
    assert.equal(Object.prototype.toString.call(outer), '[object Blob]');
    assert.equal(new ConcatBlob().size, 0);
  });

  it('gives each reader bytes of its own: changing what one blob read changes no other blob', async () => {
    const first = new Uint8Array(await new ConcatBlob(['\n']).arrayBuffer());
    first[0] = 0x41;
    const line = new Uint8Array([0x61]);
    const second = new ConcatBlob([line, '\n']);
    (await second.bytes())[1] = 0x42;
    assert.equal(await new ConcatBlob(['\n', line, '\n']).text(), '\na\n');
    assert.equal(await second.text(), 'a\n');
  });
});
