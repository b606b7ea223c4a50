// A large mail's JSON (GET /api/mail/{uuid}) written as a stream: the mail's fields as
// the route's schema serialises them, then its raw message, read and escaped 64 KiB at a
// time. Built in one piece, a 10 MB message was a string, its escaped JSON and that JSON's
// bytes at once: the server's memory rose by 4.6-5.4x the message's size for each reader
// (docs/benchmarks.md "Memory of one large message"). Streamed, by the message's bytes
// (already read from the store) and one chunk.
//
// The text is the same as rawToString's: UTF-8 when the whole message is valid UTF-8
// (checked on the bytes, no string made), else one character per byte. A chunk's end may
// fall inside a UTF-8 sequence (the decoder keeps the bytes for the next) or between the
// two halves of a surrogate pair (each half is then escaped as \uXXXX, which JSON reads
// back as the same pair).
import { isUtf8 } from 'node:buffer';
import { Readable } from 'node:stream';

/** Bytes of the message decoded and escaped at a time. */
export const RAW_CHUNK_BYTES = 64 * 1024;

/** The JSON text of `raw`'s characters, without its quotes, a chunk at a time. */
function* escapedChunks(raw: Buffer): Generator<Buffer> {
  const decoder = isUtf8(raw) ? new TextDecoder('utf-8') : undefined;
  for (let at = 0; at < raw.length; at += RAW_CHUNK_BYTES) {
    const end = Math.min(raw.length, at + RAW_CHUNK_BYTES);
    const text = decoder ? decoder.decode(raw.subarray(at, end), { stream: end < raw.length }) : raw.toString('latin1', at, end);
    yield Buffer.from(JSON.stringify(text).slice(1, -1));
  }
}

/**
 * `serialized` is a JSON text with `"<field>":""` (the field empty, as the route's
 * serializer wrote it); the stream is that JSON with the field holding `raw`. Between
 * chunks the stream waits for the next turn of the event loop: a reader that takes data
 * as fast as it comes would otherwise have every chunk escaped in one turn, and a 10 MB
 * message that escapes to six times its size (bytes below 0x20) held the server's thread
 * for half a second.
 */
export function withRawStreamed(serialized: string, raw: Buffer, field = 'raw'): Readable {
  // Every other string of the object is escaped, so an unescaped `"<field>":""` is the field itself.
  const marker = `"${field}":""`;
  const at = serialized.lastIndexOf(marker);
  if (at < 0) throw new Error(`The serialised JSON has no empty ${field} field.`);
  const split = at + marker.length - 1;
  return Readable.from(
    (async function* () {
      yield Buffer.from(serialized.slice(0, split));
      for (const chunk of escapedChunks(raw)) {
        yield chunk;
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
      yield Buffer.from(serialized.slice(split));
    })(),
    { objectMode: false },
  );
}
