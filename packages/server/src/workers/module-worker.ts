// Starts a worker thread from a module file beside the caller: the built .js, or,
// when the server runs from its TypeScript source (tests), the .ts through tsx.
// Node 20 does not carry the parent's module hooks into a worker, so from source a
// two-line bootstrap registers tsx in the worker and then imports the module.
// With TEMP_INBOX_WORKERS=dist (and a current build), a server run from source starts its
// workers from the build (a worker shares no module with its parent, only messages), which
// spares each worker tsx's start-up (docs/architecture.md "Running the suite").
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

const SOURCE_DIR = '/packages/server/src/';
const BUILD_DIR = '/packages/server/dist/';

/** `name` without extension, resolved against `base` (the caller's import.meta.url). */
export function moduleWorkerUrl(base: string, name: string): URL {
  if (!base.endsWith('.ts')) return new URL(`./${name}.js`, base);
  const source = new URL(`./${name}.ts`, base);
  const at = source.href.lastIndexOf(SOURCE_DIR);
  if (process.env['TEMP_INBOX_WORKERS'] !== 'dist' || at < 0) return source;
  const built = new URL(`${source.href.slice(0, at)}${BUILD_DIR}${source.href.slice(at + SOURCE_DIR.length, -'.ts'.length)}.js`);
  return existsSync(fileURLToPath(built)) ? built : source;
}

/**
 * The flags a piscina worker started from `url` needs, and none of the process's own (V8
 * heap sizes, loaders): the TypeScript loader for a .ts module, and, for every module, no
 * require() of an ES module. piscina loads a task file with require() first and import()
 * only when that throws; since Node 20.19 require() loads an ES module synchronously, and a
 * worker ended while that load is under way (a pool closed or restarted just after it
 * started) aborted the whole process with a V8 fatal error ("IsGraphAsync must be used on
 * an instantiated module"). With the flag, require() refuses at once and piscina's import()
 * loads the module, as it did before Node 20.19.
 */
export function workerExecArgv(url: URL): string[] {
  return [...(url.pathname.endsWith('.ts') ? ['--import', 'tsx'] : []), NO_REQUIRE_ESM];
}

/** Accepted in a worker's execArgv by every Node this server supports (20.19, 22.13, 24). */
export const NO_REQUIRE_ESM = '--no-experimental-require-module';

export function startModuleWorker(url: URL, options: Omit<WorkerOptions, 'eval' | 'execArgv'> = {}): Worker {
  if (!url.pathname.endsWith('.ts')) return new Worker(url, { ...options, execArgv: [] });
  const bootstrap = `import('tsx/esm/api').then((api) => { api.register(); return import(${JSON.stringify(url.href)}); });`;
  return new Worker(bootstrap, { ...options, eval: true, execArgv: [] });
}
