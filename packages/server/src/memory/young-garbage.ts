// Frees buffers that became garbage in bulk. V8 frees a buffer's memory only when it
// collects the small object that owns it, and large data makes few such objects: the
// young generation does not fill, so nothing collects, and the buffers stay. Three places
// make such garbage (docs/decisions.md "A large message"):
// - a message's arrival: each socket read reaches the SMTP side as a fresh buffer of up
//   to 64 KiB, and smtp-server's DATA parser copies each once more to join it to the
//   last bytes of the one before; once MessageBuffer holds their bytes both are garbage
//   (a 10 MB message left 20 MB of them);
// - PostgreSQL's writes: node-postgres copies each bound value into a buffer for its
//   parameters and that into the query's message, so each part of a stored message
//   (storage/parts.ts) leaves about twice its size behind;
// - PostgreSQL's reads: each part arrives as hex text, twice its size, in socket reads
//   copied into one buffer and decoded from a string, about four times the part.
// So every GARBAGE_BYTES counted, a minor collection (a scavenge of the young generation
// alone, about a millisecond when it holds little that lives) frees them.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Bytes counted between two collections: at most about twice this is left to free. */
export const GARBAGE_BYTES = 2 * 1024 * 1024;

type Collect = (options: { type: 'minor' | 'major'; execution: 'sync' | 'async' }) => void;

let collect: Collect | null | undefined;

/**
 * V8's own collector, as `--expose-gc` gives it: the flag is set and a new context made,
 * which is given the `gc` function (the server's own global is not). Null when V8
 * refuses, and then nothing is collected early.
 */
function collector(): Collect | null {
  if (collect === undefined) {
    try {
      setFlagsFromString('--expose-gc');
      const gc: unknown = runInNewContext('typeof gc === "function" ? gc : null');
      collect = typeof gc === 'function' ? (gc as Collect) : null;
    } catch {
      collect = null;
    }
  }
  return collect;
}

let counted = 0;

/** Counts `bytes` of buffers just dropped; past GARBAGE_BYTES since the last collection, collects. */
export function countGarbage(bytes: number): void {
  counted += bytes;
  if (counted >= GARBAGE_BYTES) collectYoung();
}

/**
 * At the end of a message read or stored: when half of GARBAGE_BYTES or more was counted
 * since the last collection, collects, so a large message's last buffers are not still
 * held while the next step (its parse, the next mail) runs.
 */
export function endOfMessage(): void {
  if (counted >= GARBAGE_BYTES / 2) collectYoung();
}

function collectYoung(): void {
  counted = 0;
  collector()?.({ type: 'minor', execution: 'sync' });
}
