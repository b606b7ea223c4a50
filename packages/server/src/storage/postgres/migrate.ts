// Brings a PostgreSQL schema to the newest version: the files of migrations/ not yet in
// schema_migrations, in one transaction under an advisory lock (two nodes starting at
// once: the second waits, then finds the work done). schema_migrations has a row per
// migration run, with its file's name (docs/deploy.md "Upgrades").
import type pg from 'pg';
import { newerSchema, readMigrations, type Migration } from '../migrations.js';

let cached: Migration[] | undefined;

/** PostgreSQL's migrations, in order (read once). */
export function postgresMigrations(): Migration[] {
  cached ??= readMigrations(new URL('./migrations/', import.meta.url));
  return cached;
}

/**
 * Before the common numbering PostgreSQL counted its own 14 migrations: the common
 * number of each, by old number - 1. A schema_migrations without the name column holds
 * old numbers, and is rewritten once (translate below).
 */
export const BEFORE_COMMON_NUMBERING = [1, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 16, 17, 18];

// First key of the two-key advisory lock taken while migrating ("ti" + "mg").
const MIGRATION_LOCK = 0x74696d67;

/** Double-quotes an SQL identifier. */
export const quoteIdent = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/**
 * Rewrites an old schema_migrations (versions 1-14, PostgreSQL's own numbering) in the
 * common numbering: a row for every migration up to the common number of the last one
 * that ran (the no-op files among them included), each with its name. Old rows keep
 * their applied_at; the no-ops' rows get the time of the translation.
 */
async function translate(client: pg.PoolClient, migrations: Migration[]): Promise<void> {
  const { rows } = await client.query<{ version: number; applied_at: string }>('SELECT version, applied_at FROM schema_migrations ORDER BY version');
  const last = rows.at(-1)?.version ?? 0;
  if (last > BEFORE_COMMON_NUMBERING.length) throw newerSchema(last, BEFORE_COMMON_NUMBERING.length);
  const appliedAt = new Map(rows.map((r) => [BEFORE_COMMON_NUMBERING[r.version - 1]!, r.applied_at]));
  const upTo = last === 0 ? 0 : BEFORE_COMMON_NUMBERING[last - 1]!;
  await client.query('DELETE FROM schema_migrations');
  await client.query('ALTER TABLE schema_migrations ADD COLUMN name TEXT NOT NULL');
  for (const m of migrations.slice(0, upTo)) {
    await client.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [m.version, m.name, appliedAt.get(m.version) ?? Date.now()]);
  }
}

export async function migrate(pool: pg.Pool, schema: string | undefined): Promise<void> {
  const migrations = postgresMigrations();
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [MIGRATION_LOCK, schema ?? '']);
    if (schema !== undefined) await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}`);
    // name last, where the translation of an old table adds it.
    await client.query('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL, name TEXT NOT NULL)');
    const named = await client.query(
      "SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'schema_migrations' AND column_name = 'name'",
    );
    if (named.rowCount === 0) await translate(client, migrations);
    const { rows } = await client.query<{ v: number }>('SELECT coalesce(max(version), 0)::int AS v FROM schema_migrations');
    const version = rows[0]!.v;
    if (version > migrations.length) throw newerSchema(version, migrations.length);
    for (const m of migrations.slice(version)) {
      await client.query(m.sql);
      await client.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [m.version, m.name, Date.now()]);
    }
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch((rollbackErr: Error) => {
      broken = rollbackErr;
    });
    throw err;
  } finally {
    client.release(broken);
  }
}
