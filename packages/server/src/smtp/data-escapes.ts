// smtp-server's reading of DATA (SMTPStream._feedDataStream, 3.21.6, pinned) with one
// change: how it removes escape dots. For every line that starts with a dot (sent as two,
// RFC 5321 §4.5.2) it wrote what came before to the message stream and went on with the
// rest of the chunk in a new turn of the event loop. A 10 MB message of ".." lines is 2.6
// million such lines: 20 s of the server's CPU for one message, and every message of that
// client and the others waited behind it (docs/security.md "SMTP").
//
// Here one pass over the chunk finds the same positions in the same order and drops the
// same bytes, then writes what is left as one piece: the line-start dot that ends the
// message, an escape dot, the four bytes kept for the next chunk and the byte count are
// exactly as smtp-server has them (each step below names the branch of its code it
// stands for). data-escapes.test.ts holds this reading against smtp-server's own on
// messages cut into chunks at every offset.
import { SMTPStream } from 'smtp-server/lib/smtp-stream.js';

/** What this reads and calls of smtp-server's SMTPStream. */
interface DataReader {
  _dataStream: NodeJS.WritableStream & { writable: boolean; destroyed: boolean };
  _lastBytes: Buffer | false;
  _atDataStart: boolean;
  _countDataBytes(len: number): void;
  _endDataMode(chunk: Buffer | false, remainder: Buffer, done: () => void): void;
}

const END_SEQUENCE = Buffer.from('\r\n.\r\n');
const DOT = 0x2e;
const LF = 0x0a;

/** smtp-server's own reading, kept for the test that compares the two. */
export const originalFeed = (SMTPStream.prototype as unknown as { _feedDataStream: (chunk: Buffer, done: () => void) => void })._feedDataStream;

/** Writes `buf` to the message stream; `done` once it can take more (smtp-server's own back-pressure handling). */
function emit(reader: DataReader, buf: Buffer, done: () => void): void {
  const stream = reader._dataStream;
  if (!buf.length || !stream.writable) return done();
  if (stream.write(buf) || stream.destroyed) return done();
  const onDrain = () => {
    stream.removeListener('drain', onDrain);
    stream.removeListener('close', onDrain);
    done();
  };
  stream.once('drain', onDrain);
  stream.once('close', onDrain);
}

export function feedDataStream(this: DataReader, input: Buffer, done: () => void): void {
  let chunk = input;
  if (this._lastBytes && this._lastBytes.length) {
    chunk = Buffer.concat([this._lastBytes, chunk], this._lastBytes.length + chunk.length);
    this._lastBytes = false;
  }
  let len = chunk.length;
  // The message is empty: its first line is the ending dot.
  if (this._atDataStart && len >= 3 && chunk[0] === DOT && chunk[1] === 0x0d && chunk[2] === LF) {
    this._endDataMode(false, chunk.subarray(3), done);
    return;
  }
  // The message's first line starts with an escape dot.
  if (this._atDataStart && len >= 2 && chunk[0] === DOT && chunk[1] === DOT) {
    chunk = chunk.subarray(1);
    len--;
    this._atDataStart = false;
  }
  // The pieces of message between escape dots, each escape dot left out.
  const pieces: Buffer[] = [];
  let start = 0;
  let size = 0;
  for (let i = 2; i < len - 2; i++) {
    if (chunk[i] !== DOT || chunk[i - 1] !== LF) continue;
    if (chunk[i - 2] === END_SEQUENCE[0] && chunk[i + 1] === END_SEQUENCE[3] && chunk[i + 2] === END_SEQUENCE[4]) {
      // The ending dot: everything before it is the message's last piece.
      pieces.push(chunk.subarray(start, i));
      size += i - start;
      this._countDataBytes(i - start);
      this._endDataMode(Buffer.concat(pieces, size), chunk.subarray(i + 3), done);
      return;
    }
    if (chunk[i + 1] === DOT) {
      // An escape dot: smtp-server wrote chunk[start, i) and went on from the next dot,
      // looking from two bytes past it (neither can start a line).
      pieces.push(chunk.subarray(start, i));
      size += i - start;
      this._countDataBytes(i - start);
      start = i + 1;
      i = start + 1;
    }
  }
  // The last four bytes wait for the next chunk (they may start the ending); the rest is message.
  const rest = chunk.subarray(start);
  this._lastBytes = rest.length < 4 ? rest : rest.subarray(rest.length - 4);
  const tail = rest.subarray(0, rest.length - this._lastBytes.length);
  if (tail.length) {
    pieces.push(tail);
    size += tail.length;
    this._countDataBytes(tail.length);
  }
  emit(this, pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces, size), done);
}

(SMTPStream.prototype as unknown as { _feedDataStream: typeof feedDataStream })._feedDataStream = feedDataStream;
