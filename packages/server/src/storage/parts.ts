// Large messages and attachments are stored in parts, by both backends: a value bound
// whole is copied whole on its way to the database (SQLite copied a 7.3 MB attachment
// twice while it stored the row; node-postgres copies each value into the query's
// message, in a buffer that grows by half at a time). Bound a part at a time, no such
// copy is larger than a part (docs/decisions.md "A large message").

import { countGarbage } from '../memory/young-garbage.js';

/** The size of each stored part; the last may be shorter. */
export const PART_BYTES = 512 * 1024;

/** `bytes` cut into parts of PART_BYTES, as views of it (no copy): always at least one, empty for empty bytes. */
export function partsOf(bytes: Buffer): Buffer[] {
  const parts: Buffer[] = [];
  for (let at = 0; at === 0 || at < bytes.length; at += PART_BYTES) parts.push(bytes.subarray(at, at + PART_BYTES));
  return parts;
}

/**
 * One buffer of exactly `bytes`, filled by `add` with the pieces of a message or an
 * attachment in order as they are read, so that it is held once rather than as its parts
 * and again as their join; each piece is garbage once added (counted as such by
 * memory/young-garbage.ts). `done` is undefined unless the pieces filled it exactly: a
 * part missing or changed means the mail was deleted while it was read.
 */
export function partsJoiner(bytes: number): { add(piece: Buffer): boolean; done(): Buffer | undefined } {
  const whole = Buffer.allocUnsafe(bytes);
  let at = 0;
  // A piece that did not fit: no later piece is added, and there is no whole.
  let broken = false;
  return {
    add(piece) {
      if (broken || at + piece.length > bytes) {
        broken = true;
        return false;
      }
      piece.copy(whole, at);
      at += piece.length;
      countGarbage(piece.length);
      return true;
    },
    done: () => (!broken && at === bytes ? whole : undefined),
  };
}

/**
 * `head` (what the row itself holds) and then `rest` (the further parts, `restBytes` in
 * all, as a synchronous store reads them) joined by a partsJoiner; undefined when they do
 * not fill it exactly.
 */
export function joinParts(head: Buffer[], restBytes: number, rest: Iterable<Buffer>): Buffer | undefined {
  const whole = partsJoiner(head.reduce((n, piece) => n + piece.length, 0) + restBytes);
  for (const piece of head) whole.add(piece);
  for (const piece of rest) if (!whole.add(piece)) return undefined;
  return whole.done();
}

/** A part of a message being read was not there: the mail was purged while it was read. */
export class PartsGoneError extends Error {
  override name = 'PartsGoneError';
}

/**
 * The pieces of a message or an attachment `bytes` long, each read only when asked for:
 * `head` (what the row holds), then parts 1 to `parts - 1` by `readPart`. A reader that
 * is slow to take them holds the piece in flight, never the whole (docs/security.md
 * "Large answers"): each reading lets go of a head piece once it has handed it on, so
 * only the reader (the MailReader) keeps the head, not every answer read from it.
 * Throws PartsGoneError when a part is missing or the pieces do not add up to `bytes`.
 */
export function partsReader(head: Buffer[], bytes: number, parts: number, readPart: (part: number) => Buffer | undefined | Promise<Buffer | undefined>): () => AsyncGenerator<Buffer> {
  return () => readParts([...head], bytes, parts, readPart);
}

async function* readParts(head: (Buffer | undefined)[], bytes: number, parts: number, readPart: (part: number) => Buffer | undefined | Promise<Buffer | undefined>): AsyncGenerator<Buffer> {
  let read = 0;
  let part = 0;
  // One loop and one variable for every piece: a suspended generator keeps whatever its
  // registers last held, so a loop of its own over the head kept its last piece (a part)
  // for as long as the answer lasted.
  for (let at = 0; ; ) {
    let piece: Buffer | undefined;
    if (at < head.length) {
      piece = head[at]!;
      head[at++] = undefined;
    } else if (++part < parts) {
      piece = await readPart(part);
      if (!piece || read + piece.length > bytes) throw new PartsGoneError('The mail was deleted while it was read.');
    } else break;
    read += piece.length;
    yield piece;
    // Asked for the next: this one is garbage (memory/young-garbage.ts).
    if (part > 0) countGarbage(piece.length);
    piece = undefined;
  }
  if (read !== bytes) throw new PartsGoneError('The mail was deleted while it was read.');
}
