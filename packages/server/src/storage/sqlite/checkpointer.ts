// WAL checkpoints off the event loop. Left to itself, SQLite checkpoints inside
// whichever commit pushes the WAL past 1,000 pages, and that commit (with the
// checkpoint's fsyncs) blocks every SMTP session and HTTP request for 10-15 ms.
// Here the serving connection never checkpoints; a worker thread with its own
// connection runs a PASSIVE checkpoint on a timer, which never blocks a writer.
// If the worker cannot run, the serving connection checkpoints as SQLite would.
import type Database from 'better-sqlite3';
import { moduleWorkerUrl, startModuleWorker } from '../../workers/module-worker.js';

/** How often the worker checkpoints. */
const INTERVAL_MS = 250;


export interface Checkpointer {
  close(): Promise<void>;
}

/** Starts checkpointing `file` from a worker thread; `db` (the serving connection) stops checkpointing itself. */
export function startCheckpointer(db: Database.Database, file: string): Checkpointer {
  const autocheckpoint = db.pragma('wal_autocheckpoint', { simple: true }) as number;
  db.pragma('wal_autocheckpoint = 0');
  const fallBack = () => {
    if (db.open) db.pragma(`wal_autocheckpoint = ${autocheckpoint}`);
  };
  const worker = startModuleWorker(moduleWorkerUrl(import.meta.url, 'checkpoint-worker'), { workerData: { file, intervalMs: INTERVAL_MS } });
  worker.unref();
  let closing = false;
  let exited = false;
  /** The thread has its connection and its timer (it said so). */
  let ready = false;
  worker.once('message', (message) => {
    if (message === 'ready') ready = true;
  });
  const exit = new Promise<void>((resolve) => {
    worker.once('exit', () => {
      exited = true;
      resolve();
    });
  });
  worker.once('error', fallBack);
  worker.once('exit', (code) => {
    if (code !== 0 || !closing) fallBack();
  });
  return {
    async close() {
      closing = true;
      if (exited) return;
      if (!ready) {
        // Still starting (a store closed within a few hundred milliseconds of opening,
        // as tests do): it has checkpointed nothing, so there is nothing to wait for.
        // Ending it cannot cut a SQLite call short (a thread stops only between its
        // JavaScript steps, and its connection is closed as it ends); the serving
        // connection, the last one then, checkpoints as it closes.
        await worker.terminate();
        return;
      }
      worker.postMessage('close');
      const timeout = setTimeout(() => void worker.terminate(), 5_000);
      await exit;
      clearTimeout(timeout);
    },
  };
}
