// The checkpointing thread of checkpointer.ts: its own connection to the database,
// a PASSIVE checkpoint on a timer (it never blocks a writer), and a last one on close.
import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';

const { file, intervalMs } = workerData as { file: string; intervalMs: number };
const db = new Database(file);
db.pragma('busy_timeout = 5000');
db.pragma('wal_autocheckpoint = 0');
// Prepared once: db.pragma() would prepare a statement per call, and this thread
// allocates so little that V8 would hardly ever collect them (native memory grows).
const passive = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
const checkpoint = () => {
  try {
    passive.all();
  } catch {
    // SQLITE_BUSY and the like: the next round tries again.
  }
};
const timer = setInterval(checkpoint, intervalMs);
parentPort!.on('message', (message) => {
  if (message !== 'close') return;
  clearInterval(timer);
  checkpoint();
  db.close();
  parentPort!.close();
});
