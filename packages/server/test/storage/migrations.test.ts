// The migrations as files (storage/migrations.ts): both backends number the same changes
// alike, a change one backend lacks is an explicit no-op there, and a folder with a gap
// or none at all is refused with a plain error (docs/deploy.md "Upgrades").
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { readMigrations } from '../../src/storage/migrations.js';
import { postgresMigrations } from '../../src/storage/postgres/migrate.js';
import { sqliteMigrations } from '../../src/storage/sqlite/migrate.js';

const isNoOp = (sql: string) => /^-- No-op on (SQLite|PostgreSQL): \S.*\n?$/.test(sql);

describe('schema migrations', () => {
  it('SQLite and PostgreSQL have the same numbers and names; a no-op is one comment saying why', () => {
    const sqlite = sqliteMigrations();
    const postgres = postgresMigrations();
    assert.deepEqual(
      postgres.map((m) => m.name),
      sqlite.map((m) => m.name),
    );
    assert.ok(!sqlite.some((m) => isNoOp(m.sql)), 'SQLite has every change so far');
    const noOps = postgres.filter((m) => isNoOp(m.sql)).map((m) => m.version);
    assert.deepEqual(noOps, [2, 3, 12, 14]);
    for (const m of [...sqlite, ...postgres]) {
      assert.ok(isNoOp(m.sql) || /^-- \S/.test(m.sql), `${m.name} starts with a comment of what it changes`);
      if (/^-- No-op/i.test(m.sql)) assert.ok(isNoOp(m.sql), `${m.name}: a no-op is a single line`);
    }
  });

  it('a folder with a gap in its numbers, or none, is refused with a plain error', () => {
    const dir = mkdtempSync(join(tmpdir(), 'temp-inbox-migrations-'));
    try {
      const url = pathToFileURL(`${dir}/m/`);
      assert.throws(() => readMigrations(url), /The schema migrations are missing at .*\/m\/? \(the build copies them there: npm run build\)\./);
      mkdirSync(join(dir, 'm'));
      assert.throws(() => readMigrations(url), /missing/, 'an empty folder');
      writeFileSync(join(dir, 'm', '0001_init.sql'), '-- init\nSELECT 1;\n');
      writeFileSync(join(dir, 'm', 'README.md'), 'not a migration\n');
      assert.deepEqual(readMigrations(url), [{ version: 1, name: '0001_init', sql: '-- init\nSELECT 1;\n' }]);
      writeFileSync(join(dir, 'm', '0003_later.sql'), 'SELECT 1;\n');
      assert.throws(() => readMigrations(url), /0003_later\.sql is not migration 0002_<name>\.sql\./);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
