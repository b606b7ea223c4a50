// Regenerates the configuration table in docs/deploy.md (--write) or checks it (--check).
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { withConfigTable } from '../src/config/table.js';

const docPath = fileURLToPath(new URL('../../../docs/deploy.md', import.meta.url));
const current = readFileSync(docPath, 'utf8');
const next = withConfigTable(current);
if (process.argv.includes('--write')) {
  writeFileSync(docPath, next);
  console.log('docs/deploy.md configuration table updated.');
} else if (next !== current) {
  console.error('docs/deploy.md configuration table is stale: run npm run docs:config');
  process.exit(1);
}
