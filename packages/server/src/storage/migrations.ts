// The schema migrations of a backend: numbered SQL files (NNNN_name.sql) in its
// migrations/ folder, read at start from next to the module (the build copies them into
// dist/: scripts/copy-migrations.mjs). Both backends share one numbering: the same number
// is the same change, and a change only one backend needs is a no-op file on the other
// (docs/deploy.md "Upgrades").
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export interface Migration {
  /** Its number in the common numbering, from 1. */
  version: number;
  /** The file's name without .sql, e.g. 0004_bodies. */
  name: string;
  sql: string;
}

const FILE = /^(\d{4})_([a-z0-9_]+)\.sql$/;

/** The migrations in `dir` in order; throws when the folder is missing or its numbers have a gap. */
export function readMigrations(dir: URL): Migration[] {
  const path = fileURLToPath(dir);
  let names: string[];
  try {
    names = readdirSync(path).filter((f) => f.endsWith('.sql'));
  } catch {
    throw new Error(`The schema migrations are missing at ${path} (the build copies them there: npm run build).`);
  }
  const migrations = names.sort().map((file, i): Migration => {
    const m = FILE.exec(file);
    if (!m || Number(m[1]) !== i + 1) throw new Error(`${path}: ${file} is not migration ${String(i + 1).padStart(4, '0')}_<name>.sql.`);
    return { version: i + 1, name: file.slice(0, -'.sql'.length), sql: readFileSync(`${path}/${file}`, 'utf8') };
  });
  if (migrations.length === 0) throw new Error(`The schema migrations are missing at ${path} (the build copies them there: npm run build).`);
  return migrations;
}

/** The error of a database whose schema a later server made. */
export const newerSchema = (version: number, known: number): Error =>
  new Error(`The database schema (version ${version}) is newer than this server understands (${known}).`);
