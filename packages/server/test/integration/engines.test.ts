// Honest engines: every package that an install of ours brings in supports the Node
// versions the packages declare. The lockfile records each package's own `engines`; a
// run-time package must accept every version of the declared range, a development one
// (tests, benches, linters, builds) every version of the range the tests run on.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// semver comes with npm's own tree (no types of its own here): the three calls used.
const semver = createRequire(import.meta.url)('semver') as {
  validRange(range: string): string | null;
  satisfies(version: string, range: string): boolean;
  subset(sub: string, sup: string): boolean;
};

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const read = (file: string) => JSON.parse(readFileSync(join(ROOT, file), 'utf8')) as { engines?: { node?: string } };
const root = read('package.json');
/** The range the README states; CI runs the tests on its first and its last major (20 and 24). */
const DECLARED = root.engines?.node ?? '';
const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version?: string; dev?: boolean; engines?: { node?: string } | string[] }> };

/** The packages of the lockfile whose engines.node does not accept every version of range. */
function violations(range: string, dev: boolean): string[] {
  const bad: string[] = [];
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (!path.includes('node_modules/') || Boolean(entry.dev) !== dev) continue;
    const wanted = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
    if (wanted && !semver.subset(range, wanted)) bad.push(`${path}@${entry.version} wants node ${wanted}`);
  }
  return bad;
}

describe('engines', () => {
  it('every publishable package and the workspace declare one range, and it is a valid one', () => {
    assert.ok(semver.validRange(DECLARED), DECLARED);
    for (const pkg of ['api', 'server', 'client']) assert.equal(read(`packages/${pkg}/package.json`).engines?.node, DECLARED, `packages/${pkg}`);
    // Node 20 reached its end of life in April 2026; the floor is the first 20.x that every dependency accepts.
    assert.ok(semver.satisfies('20.19.0', DECLARED) && !semver.satisfies('20.18.3', DECLARED) && semver.satisfies('24.0.0', DECLARED));
  });

  it('every run-time dependency supports the whole declared range', () => {
    assert.deepEqual(violations(DECLARED, false), []);
  });

  it('every development dependency supports the range the tests run on', () => {
    assert.deepEqual(violations(DECLARED, true), []);
  });

  it('the range includes the Node that runs this test', () => {
    assert.ok(semver.satisfies(process.version, DECLARED), `${process.version} is outside ${DECLARED}`);
  });
});
