// Online backup of the SQLite store: `VACUUM INTO` copies the database as one read
// transaction sees it, so the copy is consistent and mail keeps arriving meanwhile
// (in WAL mode a reader never blocks the writer). SQLite's backup API would start
// over each time the server commits, which under steady mail may be forever.
// https://sqlite.org/lang_vacuum.html#vacuuminto
// The copy's search index is then made portable (portable-search.ts), so that the
// system's sqlite3, whatever its version, reads, searches and deletes in it.
import Database from 'better-sqlite3';
import { closeSync, existsSync, openSync, statSync, unlinkSync } from 'node:fs';
import { makeSearchPortable } from './portable-search.js';

export interface BackupResult {
  bytes: number;
  mails: number;
}

/** Copies the database at `source` to `target`, a file that must not exist yet (created 0600). */
export function backupSqlite(source: string, target: string): BackupResult {
  if (!existsSync(source)) throw new BackupError(`There is no database at ${source}; check DATA_DIR.`);
  if (existsSync(target)) throw new BackupError(`${target} already exists; a backup never overwrites a file.`);
  // Created empty first, so it gets mode 0600 whatever the umask (VACUUM INTO accepts an empty file).
  closeSync(openSync(target, 'wx', 0o600));
  const db = new Database(source, { fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    db.prepare('VACUUM INTO ?').run(target);
  } catch (err) {
    try {
      unlinkSync(target);
    } catch {
      // Nothing to remove.
    }
    throw err;
  } finally {
    db.close();
  }
  const copy = new Database(target, { fileMustExist: true });
  try {
    // Readable by any sqlite3 (Debian 12's is 3.40): the search index's words as plain rows (portable-search.ts).
    makeSearchPortable(copy);
    const check = copy.pragma('quick_check', { simple: true });
    if (check !== 'ok') throw new BackupError(`The copy failed SQLite's check (${String(check)}); it was kept at ${target} for inspection.`);
    const mails = copy.prepare('SELECT count(*) FROM mails').pluck().get() as number;
    return { bytes: statSync(target).size, mails };
  } finally {
    copy.close();
  }
}

/** A backup that could not be made, for a reason the operator can act on. */
export class BackupError extends Error {}
