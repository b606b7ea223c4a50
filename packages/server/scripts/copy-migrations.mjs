#!/usr/bin/env node
// The schema migrations are SQL files that the server reads at start from next to its
// storage modules (src/storage/migrations.ts); tsc copies no SQL, so the build does here:
// src/storage/<backend>/migrations/*.sql to dist/, replacing what an earlier build left.
import { copyFileSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const server = join(dirname(fileURLToPath(import.meta.url)), '..');
for (const backend of ['sqlite', 'postgres']) {
  const from = join(server, 'src/storage', backend, 'migrations');
  const to = join(server, 'dist/storage', backend, 'migrations');
  rmSync(to, { recursive: true, force: true });
  mkdirSync(to, { recursive: true });
  for (const file of readdirSync(from).filter((f) => f.endsWith('.sql'))) copyFileSync(join(from, file), join(to, file));
}
