// Regenerates the configuration table in README.md (--write) or checks it (--check).
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { withConfigTable } from '../src/config/table.js';

const readmePath = fileURLToPath(new URL('../../../README.md', import.meta.url));
const current = readFileSync(readmePath, 'utf8');
const next = withConfigTable(current);
if (process.argv.includes('--write')) {
  writeFileSync(readmePath, next);
  console.log('README.md configuration table updated.');
} else if (next !== current) {
  console.error('README.md configuration table is stale: run npm run docs:config');
  process.exit(1);
}
