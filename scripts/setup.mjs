#!/usr/bin/env node
// `npm start` (through start.mjs) and `npm test` run this first. It installs the
// dependencies and builds, unless that was already done for exactly these inputs: a
// stamp in node_modules holds a fingerprint (path, size and modification time) of the
// lockfile, the package manifests, the TypeScript and Vite configuration and every
// source file that goes into a build. A restart with nothing changed skips both steps.
//
// Two scopes. `--service` (npm start) installs what the service runs and builds with
// (the api, server and web packages: their dependencies, TypeScript, Vite), builds those
// three, then removes the build tools again (`npm install --omit=dev --omit=optional
// --omit=peer`): the service runs on what is left, about a third of a full install. A
// later change to the sources installs the tools again (from npm's cache: seconds) before
// it rebuilds. Where a full install is present (npm test's stamp), nothing is removed.
// The default (npm test, the benches) installs every workspace — tests, benches,
// linters, Playwright — and builds everything, the client SDK included. Both remove
// what compiling the SQLite driver leaves beside its binary (object files, a copy of
// SQLite's source); the service's trimmed tree drops the driver's sources too, and a
// driver built for another Node is installed again. `--force` runs the steps whatever the stamp says; `--check` only
// tells whether they would run. Plain JavaScript: it must run before anything is built.
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const BUILT = ['packages/api/dist', 'packages/server/dist', 'packages/client/dist', 'packages/web/dist', 'packages/web/dist-admin'];
const SCOPES = {
  all: { stamp: '.temp-inbox-setup', sources: ['packages/api', 'packages/server', 'packages/client', 'packages/web'], built: BUILT },
  service: { stamp: '.temp-inbox-setup-service', sources: ['packages/api', 'packages/server', 'packages/web'], built: BUILT.filter((d) => !d.startsWith('packages/client/')) },
};
const SERVICE_WORKSPACES = ['packages/api', 'packages/server', 'packages/web'];
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

// Sizes and modification times, not contents: a restart reads no file (a checkout or an
// edit changes the time, so nothing that changed is missed; at worst a touch rebuilds).
function inputsHash(scope) {
  const list = ['package.json', 'package-lock.json', 'tsconfig.base.json', 'scripts/setup.mjs'];
  for (const dir of SCOPES[scope].sources) files(join(root, dir), list);
  const hash = createHash('sha256');
  hash.update(`${process.version}\0${scope}`);
  for (const file of list.sort()) {
    const stat = statSync(join(root, file), { throwIfNoEntry: false });
    if (stat) hash.update(`\0${file}\0${stat.size}\0${stat.mtimeMs}`);
  }
  return hash.digest('hex');
}

const stampFile = (scope) => join(root, 'node_modules', SCOPES[scope].stamp);
const stamped = (scope) => (existsSync(stampFile(scope)) ? readFileSync(stampFile(scope), 'utf8').trim() : '');

/** A step that failed; its own output (above) says why. */
export class SetupError extends Error {}

const say = (line) => process.stderr.write(`temp-inbox: ${line}\n`);
const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;

/** Runs `npm ...`, announced before and timed after. */
function step(what, args) {
  say(`${what}…`);
  const started = Date.now();
  try {
    execFileSync(process.platform === 'win32' ? 'npm.cmd' : 'npm', args, { cwd: root, stdio: 'inherit' });
  } catch (err) {
    throw new SetupError(`temp-inbox: \`npm ${args.join(' ')}\` failed (${err.status ?? err.code}); its output above says why.`);
  }
  say(`${what}: done in ${seconds(Date.now() - started)}.`);
}

/** Whether the stamp says the install and build are current for these inputs. */
export function upToDate(scope = 'all') {
  const built = SCOPES[scope].built.every((d) => existsSync(join(root, d)) && statSync(join(root, d)).isDirectory());
  if (!built) return false;
  // A full setup covers the service's as well.
  return stamped(scope) === inputsHash(scope) || (scope === 'service' && stamped('all') === inputsHash('all'));
}

/** Disk space under path, as `du` counts it (blocks in use; symbolic links not followed, a hard link counted at each of its names). */
function sizeOf(path) {
  const stat = lstatSync(path, { throwIfNoEntry: false });
  if (!stat) return 0;
  let bytes = stat.blocks * 512;
  if (!stat.isDirectory()) return bytes;
  for (const entry of readdirSync(path)) bytes += sizeOf(join(path, entry));
  return bytes;
}

const mb = (bytes) => `${Math.round(bytes / 2 ** 20)} MB`;

// What node-gyp leaves when better-sqlite3 compiles (no prebuilt binary could be had):
// object files, a static library and a copy of SQLite's source, beside the one file the
// driver loads (build/Release/better_sqlite3.node). `npm rebuild better-sqlite3` makes
// them again from the package's own sources, which stay.
const COMPILE_LEFTOVERS = ['obj', 'obj.target', '.deps', 'sqlite3.a'].map((f) => join(root, 'node_modules/better-sqlite3/build/Release', f));

function removeCompileLeftovers() {
  const found = COMPILE_LEFTOVERS.filter((f) => existsSync(f));
  if (!found.length) return;
  const bytes = found.reduce((sum, f) => sum + sizeOf(f), 0);
  for (const f of found) rmSync(f, { recursive: true, force: true });
  say(`removed what compiling the SQLite driver left beside its binary (object files and a copy of SQLite's source, ${mb(bytes)}).`);
}

// What the trimmed service tree also drops: the sources the driver compiles from (SQLite's
// amalgamation, about 10 MB, and its C++ binding). Only a rebuild reads them, and a tree
// whose driver no longer loads (another Node) gets the whole package again (below).
const DRIVER_SOURCES = ['deps', 'src'].map((f) => join(root, 'node_modules/better-sqlite3', f));

function removeDriverSources() {
  const found = DRIVER_SOURCES.filter((f) => existsSync(f));
  if (!found.length) return;
  const bytes = found.reduce((sum, f) => sum + sizeOf(f), 0);
  for (const f of found) rmSync(f, { recursive: true, force: true });
  say(`removed the sources the SQLite driver was compiled from (${mb(bytes)}): a rebuild installs the driver again.`);
}

/**
 * A driver built for another Node (its NODE_MODULE_VERSION differs) does not load, and
 * `npm install` leaves an installed package alone: the package goes, so that the install
 * puts it back built for this Node (a prebuilt binary, or compiled from its sources).
 */
function dropDriverBuiltForAnotherNode(driver) {
  if (!existsSync(driver)) return;
  try {
    createRequire(import.meta.url)(driver);
  } catch (err) {
    if (!/NODE_MODULE_VERSION|different Node\.js version|invalid ELF|wrong ELF class/.test(String(err?.message))) return;
    say(`the SQLite driver was built for another Node than ${process.version}: installing it again for this one.`);
    rmSync(join(root, 'node_modules/better-sqlite3'), { recursive: true, force: true });
  }
}

/** Installs and builds unless the stamp says both are current for these inputs. */
export function setup({ force = false, scope = 'all' } = {}) {
  const started = Date.now();
  if (!force && upToDate(scope)) {
    say(`dependencies and build are up to date (checked in ${Date.now() - started} ms).`);
    return;
  }
  const first = !existsSync(join(root, 'node_modules'));
  const service = scope === 'service';
  // Only a tree that the service's setup made is trimmed: a full install (npm test's
  // stamp, or an `npm install` by hand, which leaves no stamp) keeps its tools.
  const trim = service && !existsSync(stampFile('all')) && (first || existsSync(stampFile('service')));
  const pruned = trim && existsSync(stampFile('service')) && !existsSync(join(root, 'node_modules/typescript'));
  say(
    first
      ? `first start: installing dependencies and building (a few minutes; each step is timed below)${trim ? ', then removing the build tools, which the service does not run on' : ''}.`
      : `installing dependencies and building (the inputs changed since the last build)${pruned ? ': the build tools were removed after the last build and come back first, from npm\'s cache' : ''}.`,
  );
  const driver = join(root, 'node_modules/better-sqlite3/build/Release/better_sqlite3.node');
  dropDriverBuiltForAnotherNode(driver);
  const what = service ? 'installing what the service runs and builds with (the api, server and web packages, TypeScript and Vite; not the test tools)' : 'installing every workspace (tests, benches and linters included)';
  if (!existsSync(driver)) {
    say(`the SQLite driver (better-sqlite3) is installed with it: a prebuilt binary for Node ${process.versions.node} on ${process.platform}-${process.arch} when one can be downloaded; else it compiles from source with the system's C++ compiler and Python, which usually takes 2 to 5 minutes on 2 cores, with nothing printed meanwhile.`);
  }
  const workspaces = service ? SERVICE_WORKSPACES.flatMap((w) => ['-w', w]) : [];
  step(what, ['install', '--no-audit', '--no-fund', '--loglevel=error', ...workspaces]);
  removeCompileLeftovers();
  if (service) {
    step('building the api and server packages (TypeScript, and the server\'s SQL migrations)', ['run', 'build', '-w', '@temp-inbox/server']);
    step('building the web UI (Vite)', ['run', 'build', '-w', '@temp-inbox/web']);
  } else {
    step('building every package (TypeScript, the client SDK, the web UI)', ['run', 'build']);
  }
  if (trim) {
    const before = sizeOf(join(root, 'node_modules'));
    // dev: TypeScript, Vite and the type packages; optional: their native binaries and
    // packages the service's dependencies only try to load (a CPU-priority helper of the
    // worker pool, PostgreSQL on Cloudflare, web frameworks altcha-lib can plug into);
    // peer: Prettier, which a dependency of the HTML-support data lists and never loads.
    step('removing the build tools (TypeScript, Vite, type packages): the service runs without them', ['install', '--omit=dev', '--omit=optional', '--omit=peer', '--no-audit', '--no-fund', '--loglevel=error', ...workspaces]);
    removeDriverSources();
    say(`node_modules: ${mb(before)} before, ${mb(sizeOf(join(root, 'node_modules')))} now; \`npm test\` installs everything.`);
  }
  // Fingerprinted again: the install may rewrite package-lock.json.
  writeFileSync(stampFile(scope), `${inputsHash(scope)}\n`);
  if (!service) writeFileSync(stampFile('service'), `${inputsHash('service')}\n`);
  say(`ready in ${seconds(Date.now() - started)}.`);
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
  const scope = process.argv.includes('--service') ? 'service' : 'all';
  // `--check`: changes nothing, and says (exit code 0, or 1) whether a setup would skip both steps.
  if (process.argv.includes('--check')) {
    const current = upToDate(scope);
    say(`dependencies and build are ${current ? 'up to date' : 'not up to date (`npm run setup` installs and builds)'}.`);
    process.exit(current ? 0 : 1);
  }
  setupOrExit({ force: process.argv.includes('--force'), scope });
}
