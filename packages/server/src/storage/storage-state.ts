// Whether the store can take more (docs/security.md "Storage"). With SQLite the free
// space of DATA_DIR's disk is read (statfs, at most once a second): below DISK_MIN_FREE
// the storage is "low" and new mail is refused with a temporary reply before the disk
// fills. A write that failed for lack of space (SQLITE_FULL, ENOSPC, PostgreSQL's
// disk_full) makes it "full" (/health_check answers 503) until space is freed, or, where
// no disk can be read (PostgreSQL), for FULL_HOLD_MS after the last such failure.
import { statfs } from 'node:fs/promises';

export type StorageLevel = 'ok' | 'low' | 'full';

export interface StorageState {
  level(): Promise<StorageLevel>;
  /** Told of a write that failed: one for lack of space is noted. */
  failed(err: unknown): void;
}

export interface StorageStateOptions {
  /** The directory whose disk is read (SQLite's DATA_DIR); undefined: none (PostgreSQL). */
  dir: string | undefined;
  /** Free space to keep: at least `bytes`, or `percent` of the disk, whichever is smaller (0: no check). */
  minFree: { bytes: number; percent: number };
  now?: () => number;
}

const CACHE_MS = 1000;
const FULL_HOLD_MS = 30_000;
/** Space freed since a write failed that ends "full" (SQLite). */
const FREED_BYTES = 1024 * 1024;

/** PostgreSQL's disk_full (SQLSTATE 53100), SQLite's SQLITE_FULL, the system's ENOSPC and EDQUOT, here or in a cause. */
export function isStorageFull(err: unknown): boolean {
  for (let e = err, depth = 0; e && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (code === 'SQLITE_FULL' || code === 'ENOSPC' || code === 'EDQUOT' || code === '53100') return true;
  }
  return false;
}

export function createStorageState(opts: StorageStateOptions): StorageState {
  const now = opts.now ?? Date.now;
  let read: { at: number; free: Promise<{ avail: number; total: number } | undefined> } | undefined;
  let full: { at: number; avail: number | undefined } | undefined;

  const disk = () => {
    const dir = opts.dir;
    if (dir === undefined) return Promise.resolve(undefined);
    if (!read || now() - read.at >= CACHE_MS) {
      read = {
        at: now(),
        free: statfs(dir).then(
          (s) => ({ avail: s.bavail * s.bsize, total: s.blocks * s.bsize }),
          // A disk that cannot be read says nothing: the writes themselves tell.
          () => undefined,
        ),
      };
    }
    return read.free;
  };

  return {
    async level() {
      const d = await disk();
      if (full) {
        const freed = d && full.avail !== undefined && d.avail >= full.avail + FREED_BYTES;
        if (freed || (!d && now() - full.at > FULL_HOLD_MS)) full = undefined;
        else return 'full';
      }
      if (!d) return 'ok';
      const threshold = Math.min(opts.minFree.bytes, (d.total * opts.minFree.percent) / 100);
      return d.avail < threshold ? 'low' : 'ok';
    },
    failed(err) {
      if (!isStorageFull(err)) return;
      const at = now();
      full = { at, avail: undefined };
      // The space left when it failed: "full" ends once more than this is free.
      read = undefined;
      void disk().then((d) => {
        if (full?.at === at) full.avail = d?.avail ?? 0;
      });
    },
  };
}
