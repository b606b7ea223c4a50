// The client's own copy of the service's answer types (src/api-types.ts) is what
// scripts/api-types.mjs writes from @temp-inbox/api now: a schema change there that the
// copy lacks fails here, not in a user's type check.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

it('src/api-types.ts is current with @temp-inbox/api', () => {
  const script = fileURLToPath(new URL('../scripts/api-types.mjs', import.meta.url));
  const { status, stderr } = spawnSync(process.execPath, [script, '--check'], { encoding: 'utf8' });
  assert.equal(status, 0, stderr);
});
