// WAL checkpoints off the event loop. Left to itself, SQLite checkpoints inside
// whichever commit pushes the WAL past 1,000 pages, and that commit (with the
// checkpoint's fsyncs) blocks every SMTP session and HTTP request for 10-15 ms.
// Here the serving connection never checkpoints; a worker thread with its own
// connection runs a PASSIVE checkpoint on a timer, which never blocks a writer.
// If the worker cannot run, the serving connection checkpoints as SQLite would.
import type Database from 'better-sqlite3';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** How often the worker checkpoints. */
const INTERVAL_MS = 250;

// CommonJS, evaluated in the worker: no file of its own to resolve, built or not.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.pragma('busy_timeout = 5000');
db.pragma('wal_autocheckpoint = 0');
// Prepared once: db.pragma() would prepare a statement per call, and this thread
// allocates so little that V8 would hardly ever collect them (native memory grows).
const passive = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
const checkpoint = () => {
  try {
    passive.all();
  } catch (err) {
    // SQLITE_BUSY and the like: the next round tries again.
  }
};
const timer = setInterval(checkpoint, workerData.intervalMs);
parentPort.on('message', (message) => {
  if (message !== 'close') return;
  clearInterval(timer);
  checkpoint();
  db.close();
  parentPort.close();
});
`;

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
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { file, driver: createRequire(import.meta.url).resolve('better-sqlite3'), intervalMs: INTERVAL_MS },
    // The worker needs none of the process's flags (such as a TypeScript loader).
    execArgv: [],
  });
  worker.unref();
  let closing = false;
  let exited = false;
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
      worker.postMessage('close');
      const timeout = setTimeout(() => void worker.terminate(), 5_000);
      await exit;
      clearTimeout(timeout);
    },
  };
}
