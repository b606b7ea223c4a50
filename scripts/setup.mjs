#!/usr/bin/env node
// `npm start` (through start.mjs) and `npm test` run this first. It installs the
// dependencies and builds every package, unless that was already done for exactly these inputs:
// a stamp (node_modules/.temp-inbox-setup) holds a hash of the lockfile, the
// package manifests, the TypeScript and Vite configuration and every source
// file that goes into a build. A restart with nothing changed skips both steps.
// `--force` runs them whatever the stamp says; `--check` only tells whether they would
// run. Plain JavaScript: it must run before anything is built.
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const stampFile = join(root, 'node_modules', '.temp-inbox-setup');
const BUILT = ['packages/api/dist', 'packages/server/dist', 'packages/client/dist', 'packages/web/dist', 'packages/web/dist-admin'];
const SOURCES = ['packages/api', 'packages/server', 'packages/client', 'packages/web'];
const SKIP_DIRS = new Set(['node_modules', 'dist', 'dist-admin', 'test', '.git']);

/** Every file under dir that can change a build, as paths relative to the repository. */
function files(dir, out) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!SKIP_DIRS.has(entry.name)) files(path, out);
    } else if (!entry.name.endsWith('.tsbuildinfo')) out.push(relative(root, path));
  }
  return out;
}

function inputsHash() {
  const list = ['package.json', 'package-lock.json', 'tsconfig.base.json'];
  for (const dir of SOURCES) files(join(root, dir), list);
  const hash = createHash('sha256');
  hash.update(process.version);
  for (const file of list.sort()) {
    if (!existsSync(join(root, file))) continue;
    hash.update(`\0${file}\0`);
    hash.update(readFileSync(join(root, file)));
  }
  return hash.digest('hex');
}

/** A step that failed; its own output (above) says why. */
export class SetupError extends Error {}

function npm(...args) {
  try {
    execFileSync(process.platform === 'win32' ? 'npm.cmd' : 'npm', args, { cwd: root, stdio: 'inherit' });
  } catch (err) {
    throw new SetupError(`temp-inbox: \`npm ${args.join(' ')}\` failed (${err.status ?? err.code}); its output above says why.`);
  }
}

/** Whether the stamp says the install and build are current for these inputs. */
export function upToDate() {
  const current = existsSync(stampFile) ? readFileSync(stampFile, 'utf8').trim() : '';
  return current === inputsHash() && BUILT.every((d) => existsSync(join(root, d)) && statSync(join(root, d)).isDirectory());
}

/** Installs and builds unless the stamp says both are current for these inputs. */
export function setup({ force = false } = {}) {
  const started = Date.now();
  if (!force && upToDate()) {
    process.stderr.write(`temp-inbox: dependencies and build are up to date (checked in ${Date.now() - started} ms).\n`);
    return;
  }
  process.stderr.write('temp-inbox: installing dependencies and building (the inputs changed since the last build).\n');
  npm('install', '--no-audit', '--no-fund', '--loglevel=error');
  npm('run', 'build');
  // Hashed again: the install may rewrite package-lock.json.
  writeFileSync(stampFile, `${inputsHash()}\n`);
}

/** setup(), with a failure reported in one line and exit code 1 (never a stack trace). */
export function setupOrExit(options) {
  try {
    setup(options);
  } catch (err) {
    if (!(err instanceof SetupError)) throw err;
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  // `--check`: changes nothing, and says (exit code 0, or 1) whether a setup would skip both steps.
  if (process.argv.includes('--check')) {
    const current = upToDate();
    process.stderr.write(`temp-inbox: dependencies and build are ${current ? 'up to date' : 'not up to date (`npm run setup` installs and builds)'}.\n`);
    process.exit(current ? 0 : 1);
  }
  setupOrExit({ force: process.argv.includes('--force') });
}
