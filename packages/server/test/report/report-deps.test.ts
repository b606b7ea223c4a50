// What the HTML section's data brings (docs/decisions.md "Libraries"): caniemail declares
// @trivago/prettier-plugin-sort-imports, a formatter plugin its code never imports, which
// pulled prettier, Babel and lodash (about 25 MB) into the server's run-time dependencies.
// The root `overrides` gives caniemail an empty package in its place. Read from the
// lockfile: the server's run-time closure holds none of them, the plugin is the empty
// package, and nothing caniemail's code imports is the plugin (so the HTML section, tested
// by report-rules.test.ts, is the same).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../../../..');

interface LockEntry {
  name?: string;
  /** A workspace's link: the entry is at `resolved`. */
  link?: boolean;
  resolved?: string;
  version?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> };

/** Where `name` resolves from the package at lock path `from` (node_modules lookup, nearest first). */
function resolve(from: string, name: string): string | undefined {
  for (let dir = from; ; ) {
    const candidate = `${dir ? `${dir}/` : ''}node_modules/${name}`;
    if (lock.packages[candidate]) return candidate;
    if (!dir) return undefined;
    const at = dir.lastIndexOf('node_modules/');
    dir = at <= 0 ? '' : dir.slice(0, at - 1);
  }
}

/** Lock paths of every package the workspace `workspace` needs at run time (dependencies, optional and required peers). */
function runtimeClosure(workspace: string): Set<string> {
  const seen = new Set<string>();
  const visit = (path: string) => {
    const entry = lock.packages[path] ?? {};
    const peers = Object.keys(entry.peerDependencies ?? {}).filter((n) => !entry.peerDependenciesMeta?.[n]?.optional);
    for (const name of [...Object.keys(entry.dependencies ?? {}), ...Object.keys(entry.optionalDependencies ?? {}), ...peers]) {
      const found = resolve(path, name);
      if (!found || seen.has(found)) continue;
      seen.add(found);
      const entry = lock.packages[found]!;
      visit(entry.link && entry.resolved ? entry.resolved : found);
    }
  };
  visit(workspace);
  return seen;
}

describe('caniemail without its formatter plugin', () => {
  it("the plugin caniemail declares is the empty package, and the server's run-time closure has no prettier, Babel or lodash", () => {
    const plugin = resolve('node_modules/caniemail', '@trivago/prettier-plugin-sort-imports');
    assert.ok(plugin, 'caniemail still declares it');
    assert.equal(lock.packages[plugin]!.name, 'empty-npm-package', JSON.stringify(lock.packages[plugin]));
    assert.deepEqual(lock.packages[plugin]!.dependencies ?? {}, {});
    const closure = [...runtimeClosure('packages/server')].map((p) => p.slice(p.lastIndexOf('node_modules/') + 'node_modules/'.length));
    assert.ok(closure.includes('caniemail'), 'the closure is the one caniemail is in');
    assert.deepEqual(
      closure.filter((n) => n === 'prettier' || n.startsWith('@babel/') || n === 'lodash'),
      [],
    );
  });

  it("caniemail's code never imports the plugin", () => {
    const dist = join(dirname(createRequire(import.meta.url).resolve('caniemail/package.json')), 'dist');
    const files: string[] = [];
    const walk = (dir: string) => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        if (e.isDirectory()) walk(join(dir, e.name));
        else if (/\.(c|m)?js$/.test(e.name)) files.push(join(dir, e.name));
      }
    };
    walk(dist);
    assert.ok(files.length > 5, `${files.length} files in ${dist}`);
    for (const f of files) assert.doesNotMatch(readFileSync(f, 'utf8'), /prettier|trivago/, f);
  });
});
