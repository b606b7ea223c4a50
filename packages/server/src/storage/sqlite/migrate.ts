// Brings a SQLite database to the newest schema: the files of migrations/ after the
// version PRAGMA user_version records, in one transaction. user_version has always
// counted in what is now the common numbering (it is SQLite's history), so a database
// of any earlier release needs no translation (docs/deploy.md "Upgrades").
import type Database from 'better-sqlite3';
import { newerSchema, readMigrations, type Migration } from '../migrations.js';
import { restoreSearchIndex } from './portable-search.js';

let cached: Migration[] | undefined;

/** SQLite's migrations, in order (read once). */
export function sqliteMigrations(): Migration[] {
  cached ??= readMigrations(new URL('./migrations/', import.meta.url));
  return cached;
}

export function migrate(db: Database.Database): void {
  const migrations = sqliteMigrations();
  const version = db.pragma('user_version', { simple: true }) as number;
  if (version > migrations.length) throw newerSchema(version, migrations.length);
  db.transaction(() => {
    for (const m of migrations.slice(version)) {
      db.exec(m.sql);
      db.pragma(`user_version = ${m.version}`);
    }
  })();
  // A file restored from a backup carries its words in search_pending, not in an index
  // (portable-search.ts): the index is made again and the search queue fills it.
  restoreSearchIndex(db);
}
