// Frees the buffers a message arrived in. Each socket read reaches the SMTP side as a
// fresh buffer of up to 64 KiB, and smtp-server's DATA parser copies each once more to
// join it to the last bytes of the one before; once MessageBuffer holds their bytes both
// are garbage. But V8 frees a buffer's memory only when it collects the small object
// that owns it, and a large message makes few such objects: while a 10 MB message
// arrived the young generation never filled, so its 20 MB of read buffers stayed until
// something else caused a collection, twice the message on top of the message itself
// (docs/benchmarks.md "Memory of one large message"). So every READ_GARBAGE_BYTES taken
// in, a minor collection (a scavenge of the young generation alone, about a millisecond
// when it holds little that lives) frees them.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Bytes of message data taken in between two collections: at most about twice this is left to free. */
export const READ_GARBAGE_BYTES = 2 * 1024 * 1024;

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

let taken = 0;

/** Counts `bytes` of message data read; past READ_GARBAGE_BYTES since the last collection, collects. */
export function countRead(bytes: number): void {
  taken += bytes;
  if (taken >= READ_GARBAGE_BYTES) collectRead();
}

/**
 * At the end of a message: when half of READ_GARBAGE_BYTES or more was read since the
 * last collection, collects, so a large message's last read buffers are not still held
 * while it is parsed and stored.
 */
export function messageRead(): void {
  if (taken >= READ_GARBAGE_BYTES / 2) collectRead();
}

function collectRead(): void {
  taken = 0;
  collector()?.({ type: 'minor', execution: 'sync' });
}
