// Pieces (a message's parts, its escaped chunks) as a stream that asks for the next piece
// only when its reader has taken the last: nothing is read ahead. Readable.from reads on
// while a push finds the stream's buffer empty, so piped to a response whose socket had
// stalled it still held one piece more than the socket (a 512 KiB part of the message,
// docs/security.md "Large answers").
import { Readable } from 'node:stream';

type Pieces = AsyncIterable<Buffer> | Iterable<Buffer>;

function iteratorOf(pieces: Pieces): AsyncIterator<Buffer> | Iterator<Buffer> {
  return Symbol.asyncIterator in pieces ? pieces[Symbol.asyncIterator]() : pieces[Symbol.iterator]();
}

/** A stream of `pieces`, one read per read of the stream (empty pieces are skipped); closing it ends their iteration. */
export function pullStream(pieces: Pieces): Readable {
  const it = iteratorOf(pieces);
  // The next non-empty piece, or null at the end.
  const next = async (): Promise<Buffer | null> => {
    for (;;) {
      const r = await it.next();
      if (r.done) return null;
      if (r.value.length > 0) return r.value;
    }
  };
  return new Readable({
    highWaterMark: 0,
    read() {
      next().then(
        (piece) => this.push(piece),
        (err: unknown) => this.destroy(err instanceof Error ? err : new Error(String(err))),
      );
    },
    destroy(err, callback) {
      // A reader gone mid-answer: the pieces' own clean-up (a generator's finally) runs.
      Promise.resolve(it.return?.()).then(
        () => callback(err),
        () => callback(err),
      );
    },
  });
}
