// Durable commits without blocking the event loop. With synchronous=FULL, SQLite
// fsyncs the WAL inside every commit, on the thread that commits: the server's
// only thread, for about half a millisecond per delivery on a good disk and far
// longer on a slow one. Instead the connection commits with synchronous=NORMAL
// (the WAL is written, not synced) and the store syncs the WAL file itself, on
// libuv's thread pool, before it reports the commit done. The guarantee is the
// same as FULL's in WAL mode (https://sqlite.org/pragma.html#pragma_synchronous):
// a commit that was reported is in the WAL on disk. Commits made while a sync is
// under way share the next one (group commit), so a busy server syncs less often
// than it commits. See docs/decisions.md "Durability".
import { open, type FileHandle } from 'node:fs/promises';

export interface WalSync {
  /** Resolves once everything committed before the call is on disk; rejects if the disk refused. */
  sync(): Promise<void>;
  close(): Promise<void>;
}

export function createWalSync(walFile: string): WalSync {
  let handle: Promise<FileHandle> | undefined;
  /** The sync under way, and the one that will start when it ends (every later caller shares it). */
  let running: Promise<void> | undefined;
  let next: Promise<void> | undefined;

  // fdatasync, as SQLite uses on Linux: the WAL's data and its length, not its times.
  const syncOnce = async () => {
    handle ??= open(walFile, 'r');
    await (await handle).datasync();
  };
  const start = (): Promise<void> => {
    const p = syncOnce();
    running = p;
    const done = () => {
      if (running === p) running = undefined;
    };
    p.then(done, done);
    return p;
  };

  return {
    sync() {
      // A sync already under way may have begun before this caller's commit: it
      // cannot count. The one after it can, and is shared by everyone who asks meanwhile.
      if (!running) return start();
      next ??= running.then(
        () => undefined,
        () => undefined,
      ).then(() => {
        next = undefined;
        return start();
      });
      return next;
    },
    async close() {
      const h = handle;
      handle = undefined;
      await Promise.allSettled([running, next]);
      if (h) await (await h.catch(() => undefined))?.close();
    },
  };
}
