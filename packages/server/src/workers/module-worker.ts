// Starts a worker thread from a module file beside the caller: the built .js, or,
// when the server runs from its TypeScript source (tests), the .ts through tsx.
// Node 20 does not carry the parent's module hooks into a worker, so from source a
// two-line bootstrap registers tsx in the worker and then imports the module.
import { Worker, type WorkerOptions } from 'node:worker_threads';

/** `name` without extension, resolved against `base` (the caller's import.meta.url). */
export function moduleWorkerUrl(base: string, name: string): URL {
  return new URL(`./${name}${base.endsWith('.ts') ? '.ts' : '.js'}`, base);
}

export function startModuleWorker(url: URL, options: Omit<WorkerOptions, 'eval' | 'execArgv'> = {}): Worker {
  // None of the process's flags (V8 heap sizes, loaders) are meant for the worker.
  if (!url.pathname.endsWith('.ts')) return new Worker(url, { ...options, execArgv: [] });
  const bootstrap = `import('tsx/esm/api').then((api) => { api.register(); return import(${JSON.stringify(url.href)}); });`;
  return new Worker(bootstrap, { ...options, eval: true, execArgv: [] });
}
