// Starts a worker thread from a module file beside the caller: the built .js, or,
// when the server runs from its TypeScript source (tests), the .ts through tsx.
// Node 20 does not carry the parent's module hooks into a worker, so from source a
// two-line bootstrap registers tsx in the worker and then imports the module.
// `npm test` builds first and sets TEMP_INBOX_WORKERS=dist: a server run from source then
// starts its workers from the build (a worker shares no module with its parent, only
// messages), which spares each worker tsx's start-up (docs/architecture.md "Running the suite").
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

/** The flags a worker started from `url` needs: the TypeScript loader for a .ts module, and none of the process's own (V8 heap sizes, loaders). */
export function workerExecArgv(url: URL): string[] {
  return url.pathname.endsWith('.ts') ? ['--import', 'tsx'] : [];
}

export function startModuleWorker(url: URL, options: Omit<WorkerOptions, 'eval' | 'execArgv'> = {}): Worker {
  if (!url.pathname.endsWith('.ts')) return new Worker(url, { ...options, execArgv: [] });
  const bootstrap = `import('tsx/esm/api').then((api) => { api.register(); return import(${JSON.stringify(url.href)}); });`;
  return new Worker(bootstrap, { ...options, eval: true, execArgv: [] });
}
