// smtp-server's DATA reader (lib/smtp-stream.js), held to the protocol: what it
// hands on must not depend on how TCP cut the input. For any message, any
// dot-stuffing and any cut, the content is the un-stuffed message, the
// terminator is found exactly once, and what follows it comes back as commands
// (RFC 5321 §4.5.2). A regression here would be an SMTP smuggling hole.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import fc from 'fast-check';

interface DataStream extends Readable {
  byteLength: number;
}
interface SMTPStreamLike {
  oncommand: (command: Buffer, callback: () => void) => void;
  startDataMode(maxBytes?: number): DataStream;
  continue(): void;
  write(chunk: Buffer, callback: (err?: Error | null) => void): boolean;
  end(callback: () => void): void;
}
// The module has no type declarations of its own.
const modulePath: string = 'smtp-server/lib/smtp-stream.js';
const { SMTPStream } = (await import(modulePath)) as { SMTPStream: new () => SMTPStreamLike };

interface Outcome {
  content: Buffer;
  byteLength: number;
  commands: string[];
}

/** Feeds `wire` (what follows "DATA") cut at `cuts`, one write at a time. */
async function feed(wire: Buffer, cuts: number[]): Promise<Outcome> {
  const stream = new SMTPStream();
  const commands: string[] = [];
  stream.oncommand = (command, callback) => {
    commands.push(command.toString('binary'));
    callback();
  };
  const data = stream.startDataMode();
  const parts: Buffer[] = [];
  data.on('data', (c: Buffer) => parts.push(Buffer.from(c)));
  const ended = new Promise<void>((resolve) =>
    data.on('end', () => {
      stream.continue();
      resolve();
    }),
  );
  const points = [...new Set(cuts.filter((c) => c > 0 && c < wire.length))].sort((a, b) => a - b);
  let from = 0;
  for (const to of [...points, wire.length]) {
    await new Promise<void>((resolve, reject) => stream.write(wire.subarray(from, to), (err) => (err ? reject(err) : resolve())));
    from = to;
  }
  let timer: NodeJS.Timeout | undefined;
  const missed = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`DATA never ended: the terminator was missed in ${JSON.stringify(wire.toString('binary'))}`)), 2000);
  });
  await Promise.race([ended, missed]).finally(() => clearTimeout(timer));
  await new Promise<void>((resolve) => stream.end(resolve));
  return { content: Buffer.concat(parts), byteLength: data.byteLength, commands };
}

/** RFC 5321 section 4.5.2: a line that starts with "." gets one more. */
function stuff(lines: string[]): Buffer {
  return Buffer.from(lines.map((l) => (l.startsWith('.') ? `.${l}` : l)).join('\r\n') + '\r\n', 'binary');
}

// Lines rich in what the reader looks for: dots, CR, LF, and the terminator's pieces.
const lineArb = fc
  .array(fc.constantFrom('.', '..', '\r', '\n', 'a', 'Z', ' ', '\r\n.', '\n.', '.\r', 'x'.repeat(70)), { maxLength: 12 })
  .map((bits) => bits.join('').replace(/\r\n/g, '\n').replace(/\r|\n/g, ''));

describe('SMTP DATA reader (patched smtp-stream)', () => {
  it('any message, any cut: content is the message un-stuffed, commands after the terminator are kept (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(lineArb, { maxLength: 30 }),
        fc.array(fc.nat({ max: 4000 }), { maxLength: 40 }),
        fc.boolean(),
        async (lines, cuts, pipelined) => {
          const message = Buffer.from(lines.map((l) => `${l}\r\n`).join(''), 'binary');
          const after = pipelined ? 'RSET\r\nQUIT\r\n' : '';
          const wire = Buffer.concat([stuff(lines), Buffer.from(`.\r\n${after}`)]);
          // An empty message is the single line "." straight away.
          const expected = lines.length ? message : Buffer.alloc(0);
          const got = await feed(lines.length ? wire : Buffer.from(`.\r\n${after}`), cuts);
          assert.ok(got.content.equals(expected), `content differs for ${JSON.stringify(wire.toString('binary'))} cut at ${JSON.stringify(cuts)}`);
          assert.equal(got.byteLength, expected.length);
          assert.deepEqual(got.commands, pipelined ? ['RSET', 'QUIT'] : []);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('arbitrary bytes: the result does not depend on the cuts (property)', async () => {
    const byte = fc.constantFrom(0x2e, 0x0d, 0x0a, 0x41, 0x00, 0xff);
    await fc.assert(
      fc.asyncProperty(fc.array(byte, { maxLength: 300 }), fc.array(fc.nat({ max: 320 }), { maxLength: 30 }), async (bytes, cuts) => {
        // Whatever came before, a final terminator always ends DATA.
        const wire = Buffer.concat([Buffer.from(bytes), Buffer.from('\r\n.\r\nNOOP\r\n')]);
        const whole = await feed(wire, []);
        const cut = await feed(wire, cuts);
        const oneByOne = await feed(wire, Array.from({ length: wire.length }, (_, i) => i));
        for (const other of [cut, oneByOne]) {
          assert.ok(other.content.equals(whole.content), `content differs for ${JSON.stringify(wire.toString('binary'))}`);
          assert.equal(other.byteLength, whole.byteLength);
          assert.deepEqual(other.commands, whole.commands);
        }
      }),
      { numRuns: 400 },
    );
  });

  it('a terminator alone in the first chunk, or after a lone escaped dot, is read as the protocol says', async () => {
    // ".\r\n" first: an empty message.
    assert.equal((await feed(Buffer.from('.\r\nQUIT\r\n'), [1, 2])).content.length, 0);
    // "..\r\n" first is a line holding one dot, not the end (no early end by segmentation).
    const dot = await feed(Buffer.from('..\r\n.\r\nQUIT\r\n'), [1, 2, 3]);
    assert.equal(dot.content.toString(), '.\r\n');
    assert.deepEqual(dot.commands, ['QUIT']);
  });

  it('a large message in 64 KiB chunks comes back byte-exact', async () => {
    const lines = Array.from({ length: 40_000 }, (_, i) => (i % 7 === 0 ? `.line ${i}` : `line ${i} ${'y'.repeat(i % 90)}`));
    const message = Buffer.from(lines.map((l) => `${l}\r\n`).join(''));
    const wire = Buffer.concat([stuff(lines), Buffer.from('.\r\n')]);
    const cuts = Array.from({ length: Math.ceil(wire.length / 65536) }, (_, i) => (i + 1) * 65536 - (i % 5));
    const got = await feed(wire, cuts);
    assert.ok(got.content.equals(message));
  });
});
