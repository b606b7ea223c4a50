// The checkpointing thread of checkpointer.ts: its own connection to the database,
// a PASSIVE checkpoint on a timer (it never blocks a writer), and a last one on close.
//
// Under steady writes a PASSIVE checkpoint never empties the WAL: frames committed
// while it copies are left for the next round, so the next commit cannot start the
// WAL again and it only grows (226 MB after 8 s of the ingest bench, every mail
// appended to a file that never shrank). So each round ends with a RESTART
// checkpoint: it holds the write lock while it copies what was committed during the
// PASSIVE one (a few milliseconds of mail), and the WAL is then started again. A
// writer waits for it at most RESTART_WAIT_MS; past that the round ends as a PASSIVE
// one would, and the next tries again.
//
// It also starts each new WAL itself. Once a checkpoint has moved every frame into
// the database file, the next commit starts the WAL again from its beginning, and
// SQLite syncs the new WAL header inside that commit (with synchronous NORMAL as with
// FULL; https://sqlite.org/src/info/ff5be73dee). Left to the serving connection, that
// sync ran on the event loop for every mail of a quiet server (each one came after a
// checkpoint). So after such a checkpoint this thread makes that first commit, a one-row
// write to `wal_restarts`, and the serving connection's next commit only appends.
// docs/decisions.md "Durability".
import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';

const { file, intervalMs } = workerData as { file: string; intervalMs: number };
const db = new Database(file);
db.pragma('busy_timeout = 5000');
db.pragma('wal_autocheckpoint = 0');
// A checkpoint syncs the WAL before it copies it and the database file after, under
// NORMAL as under FULL; NORMAL spares the restart's own commit a second sync.
db.pragma('synchronous = NORMAL');
// Prepared once: db.pragma() would prepare a statement per call, and this thread
// allocates so little that V8 would hardly ever collect them (native memory grows).
const passive = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
// Changes when another connection commits, not when this one does (sqlite.org/pragma.html#pragma_data_version).
const dataVersion = db.prepare('PRAGMA data_version').pluck();
const restart = db.prepare('INSERT INTO wal_restarts (id, count) VALUES (1, 1) ON CONFLICT (id) DO UPDATE SET count = count + 1');
const restartWal = db.transaction(() => restart.run());
const restartCheckpoint = db.prepare('PRAGMA wal_checkpoint(RESTART)');
/** Longest the RESTART checkpoint waits for the write lock and for readers to leave the WAL. */
const RESTART_WAIT_MS = 10;
const waitForLocks = db.prepare(`PRAGMA busy_timeout = ${RESTART_WAIT_MS}`);
const waitForNothing = db.prepare('PRAGMA busy_timeout = 0');
// A WAL that a large message (or an older version's growth) made long is cut back to this
// when it starts again, so the file's size on disk stays bounded.
db.pragma(`journal_size_limit = ${32 * 1024 * 1024}`);
// From here on nothing waits for a lock but the RESTART checkpoint: a PASSIVE checkpoint
// never does, and the restart's commit gives way to a writer that holds the lock.
waitForNothing.get();

/** data_version right after this thread started the WAL; while it holds, nobody else has written since. */
let restartedAt: number | undefined;

/** The first commit of a new WAL, unless a writer is busy (it then starts the WAL itself, as SQLite would). */
const startWal = () => {
  try {
    restartWal.immediate();
    restartedAt = dataVersion.get() as number;
  } catch {
    // SQLITE_BUSY: a writer holds the lock.
  }
};

interface CheckpointResult {
  busy: number;
  log: number;
  checkpointed: number;
}

/** RESTART: the rest of the WAL copied under the write lock, and no reader left in it; false when a lock was not had in time. */
const emptied = (): boolean => {
  waitForLocks.get();
  try {
    const [result] = restartCheckpoint.all() as CheckpointResult[];
    return result?.busy === 0;
  } finally {
    waitForNothing.get();
  }
};

const checkpoint = (closing = false) => {
  try {
    // The WAL holds only this thread's restart: nothing to copy, and copying it would
    // leave the serving connection a WAL to start again.
    if (!closing && restartedAt !== undefined && dataVersion.get() === restartedAt) return;
    restartedAt = undefined;
    const [result] = passive.all() as CheckpointResult[];
    // Only once the PASSIVE one copied all it saw: when it could not (a reader holds an
    // older snapshot, as a long read does), a RESTART would hold the write lock for its
    // whole wait for that reader, and fail.
    if (!closing && result && result.log > 0 && result.checkpointed === result.log && emptied()) startWal();
  } catch {
    // SQLITE_BUSY and the like: the next round tries again.
  }
};
const timer = setInterval(checkpoint, intervalMs);
parentPort!.postMessage('ready');
parentPort!.on('message', (message) => {
  if (message !== 'close') return;
  clearInterval(timer);
  checkpoint(true);
  db.close();
  parentPort!.close();
});
