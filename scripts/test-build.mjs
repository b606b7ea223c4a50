// The suite's JavaScript: a mirror of the repository under .test-build/ in which every
// TypeScript file of the packages (sources and tests) sits beside itself compiled to
// JavaScript by esbuild (as tsx compiles it), and every other file is a hard link to the
// original (a folder with nothing to compile, a symbolic link to it). `npm test` runs the
// mirror's test files with plain Node (TEST_MIRROR=0: the sources through tsx): no module hook in the test processes,
// which under Node 20 cost each process about as much as everything else it imports
// (docs/architecture.md "Running the suite"). Paths keep their depth, so a
// test's `new URL('../fixtures/x', import.meta.url)` and the repository root it computes
// resolve as they do in the real tree; node_modules folders are symbolic links to the real
// ones, and the mirror is rebuilt from scratch each run.
import { transform } from 'esbuild';
import { linkSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const MIRROR = join(ROOT, '.test-build');
// data/: a service run from the checkout keeps its database there; no test reads it.
const NOT_MIRRORED = new Set(['.git', '.test-build', 'data']);

/** esbuild's loader for a file the mirror compiles, or undefined for one it links. */
function loaderFor(path) {
  if (!path.includes(`${join(ROOT, 'packages')}/`) || path.endsWith('.d.ts')) return undefined;
  if (path.endsWith('.tsx')) return 'tsx';
  if (path.endsWith('.ts') || path.endsWith('.mts')) return 'ts';
  return undefined;
}

// The packages' tsconfig settings that change what esbuild emits.
const TSCONFIG = { compilerOptions: { target: 'ES2022', useDefineForClassFields: true, verbatimModuleSyntax: false, jsx: 'react-jsx', jsxImportSource: 'preact' } };

/** Builds the mirror; returns how many files it compiled. */
export async function buildTestMirror() {
  rmSync(MIRROR, { recursive: true, force: true });
  const jobs = [];
  // Mirrors `dir` and returns how many files in it are compiled. A folder with nothing to
  // compile becomes a link to the real one, so that what it holds (scripts, bins, builds,
  // docs) is the checkout's own: Node runs a module by its real path, so scripts/setup.mjs
  // reached through the mirror still checks the checkout.
  const walk = (dir) => {
    const target = join(MIRROR, relative(ROOT, dir));
    mkdirSync(target, { recursive: true });
    const before = jobs.length;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const from = join(dir, entry.name);
      const to = join(target, entry.name);
      if (dir === ROOT && NOT_MIRRORED.has(entry.name)) continue;
      if (entry.name === 'node_modules' || entry.isSymbolicLink()) symlinkSync(from, to);
      else if (entry.isDirectory() && walk(from) === 0) {
        rmSync(to, { recursive: true });
        symlinkSync(from, to, 'dir');
      } else if (entry.isFile()) {
        linkSync(from, to);
        const loader = loaderFor(from);
        if (loader) jobs.push([from, to.replace(/\.m?tsx?$/, (ext) => (ext === '.mts' ? '.mjs' : '.js')), loader]);
      }
    }
    return jobs.length - before;
  };
  walk(ROOT);
  for (let i = 0; i < jobs.length; i += 64) {
    await Promise.all(
      jobs.slice(i, i + 64).map(async ([from, to, loader]) => {
        const out = await transform(readFileSync(from, 'utf8'), { loader, format: 'esm', target: 'node20', sourcemap: 'inline', sourcefile: from, tsconfigRaw: TSCONFIG });
        writeFileSync(to, out.code);
      }),
    );
  }
  return jobs.length;
}

