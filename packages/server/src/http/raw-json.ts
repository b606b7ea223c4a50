// A large mail's JSON (GET /api/mail/{uuid}) written as a stream: the mail's fields as
// the route's schema serialises them, then its raw message, read and escaped 32 KiB at a
// time. Built in one piece, a 10 MB message was a string, its escaped JSON and that JSON's
// bytes at once: the server's memory rose by 4.6-5.4x the message's size for each reader
// (docs/benchmarks-journal.md "Memory of one large message"). Streamed from the store's parts,
// by the part being escaped and one escaped chunk, however slowly the client reads
// (docs/security.md "Large answers").
//
// The text is the same as rawToString's: UTF-8 when the whole message is valid UTF-8
// (checked on the bytes, a part at a time, before the first is written), else one
// character per byte. A chunk's end may
// fall inside a UTF-8 sequence (the decoder keeps the bytes for the next) or between the
// two halves of a surrogate pair (each half is then escaped as \uXXXX, which JSON reads
// back as the same pair).
import { isUtf8 } from 'node:buffer';
import type { Readable } from 'node:stream';
import { pullStream } from './pull-stream.js';

/**
 * Bytes of the message decoded and escaped at a time. A reader that stops holds one
 * escaped chunk on the server besides the part: up to six times this (bytes below 0x20
 * become \u00XX), so it is kept smaller than the 64 KiB it was (up to 384 KiB more a reader).
 */
export const RAW_CHUNK_BYTES = 32 * 1024;

/** A raw message read a piece at a time (storage's MailReader), and whether all of it is valid UTF-8. */
export interface RawPieces {
  utf8: boolean;
  pieces: AsyncIterable<Buffer> | Iterable<Buffer>;
}

/** Whether every piece together is valid UTF-8, read once without holding them (a sequence may straddle two pieces). */
export async function piecesAreUtf8(pieces: AsyncIterable<Buffer>): Promise<boolean> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  try {
    for await (const piece of pieces) {
      for (let at = 0; at < piece.length; at += RAW_CHUNK_BYTES) {
        decoder.decode(piece.subarray(at, at + RAW_CHUNK_BYTES), { stream: true });
        // A turn of the event loop a chunk, as the answer itself takes: checking 10 MB at once would hold the thread.
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    }
    decoder.decode();
    return true;
  } catch (err) {
    if (err instanceof TypeError) return false;
    throw err;
  }
}

const escaped = (text: string): Buffer => Buffer.from(JSON.stringify(text).slice(1, -1));

/**
 * The JSON text of the raw message's characters, without its quotes, a chunk at a time.
 * An iterator of fields, not a generator: a suspended generator keeps whatever its
 * registers last held, and one over pieces and chunks kept the previous part as well as
 * the one being escaped; here the piece is let go once its last chunk is escaped.
 */
function escapedChunks(raw: RawPieces): AsyncIterableIterator<Buffer> {
  const decoder = raw.utf8 ? new TextDecoder('utf-8') : undefined;
  const pieces = Symbol.asyncIterator in raw.pieces ? raw.pieces[Symbol.asyncIterator]() : raw.pieces[Symbol.iterator]();
  let piece: Buffer | undefined;
  let at = 0;
  let ended = false;
  const chunks: AsyncIterableIterator<Buffer> = {
    async next() {
      while (!ended && (!piece || at >= piece.length)) {
        piece = undefined;
        const r = await pieces.next();
        if (r.done) ended = true;
        else [piece, at] = [r.value, 0];
      }
      if (!piece) {
        // Valid UTF-8 leaves nothing behind; flushed all the same.
        const rest = decoder?.decode() ?? '';
        return rest === '' ? { done: true, value: undefined } : { done: false, value: escaped(rest) };
      }
      const end = Math.min(piece.length, at + RAW_CHUNK_BYTES);
      const text = decoder ? decoder.decode(piece.subarray(at, end), { stream: true }) : piece.toString('latin1', at, end);
      at = end;
      return { done: false, value: escaped(text) };
    },
    async return() {
      piece = undefined;
      await pieces.return?.();
      return { done: true, value: undefined };
    },
    [Symbol.asyncIterator]: () => chunks,
  };
  return chunks;
}

/**
 * `serialized` is a JSON text with `"<field>":""` (the field empty, as the route's
 * serializer wrote it); the stream is that JSON with the field holding `raw`, a Buffer or
 * pieces read as the stream is read. Between chunks the stream waits for the next turn of
 * the event loop: a reader that takes data as fast as it comes would otherwise have every
 * chunk escaped in one turn, and a 10 MB message that escapes to six times its size (bytes
 * below 0x20) held the server's thread for half a second. Read by a stream, a reader that
 * stops reading holds a piece and a chunk, not the message: nothing is escaped ahead of
 * what the response has taken (pull-stream.ts).
 */
export function withRawStreamed(serialized: string, raw: Buffer | RawPieces, field = 'raw'): Readable {
  // Every other string of the object is escaped, so an unescaped `"<field>":""` is the field itself.
  const marker = `"${field}":""`;
  const at = serialized.lastIndexOf(marker);
  if (at < 0) throw new Error(`The serialised JSON has no empty ${field} field.`);
  const split = at + marker.length - 1;
  const source: RawPieces = Buffer.isBuffer(raw) ? { utf8: isUtf8(raw), pieces: [raw] } : raw;
  return pullStream(
    (async function* () {
      yield Buffer.from(serialized.slice(0, split));
      for await (const chunk of escapedChunks(source)) {
        yield chunk;
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
      yield Buffer.from(serialized.slice(split));
    })(),
  );
}
