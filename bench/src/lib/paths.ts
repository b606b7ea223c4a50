// Where things are: the repository root, the built server, the bench children.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const BENCH_DIR = join(ROOT, 'bench');
export const RESULTS_DIR = join(BENCH_DIR, 'results');
/** The temp-inbox-server command of the installed @temp-inbox/server (its package.json "bin"): the service as users run it. */
export const SERVER_MAIN: string = (() => {
  const manifest = createRequire(import.meta.url).resolve('@temp-inbox/server/package.json');
  const { bin } = JSON.parse(readFileSync(manifest, 'utf8')) as { bin: Record<string, string> };
  const main = bin['temp-inbox-server'];
  if (!main) throw new Error(`${manifest} has no "temp-inbox-server" in "bin"`);
  return join(dirname(manifest), main);
})();
export const CHILDREN_DIR = fileURLToPath(new URL('../children/', import.meta.url));
export const MAILDEV_BIN = join(ROOT, 'node_modules', 'maildev', 'dist', 'bin', 'maildev.js');

/** The domain every bench server accepts mail for. */
export const DOMAIN = 'temp-inbox.localhost';

/**
 * The node flags `npm start` runs the server with (the root package.json's "start"
 * script), so that every bench and the soak run the service as users do.
 */
export const SERVER_NODE_FLAGS: string[] = (() => {
  const start = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts['start'] ?? '';
  const m = /^node((?:\s+--\S+)*)\s+scripts\/start\.mjs$/.exec(start.trim());
  if (!m) throw new Error(`package.json "start" is not "node [--flags] scripts/start.mjs": ${start}`);
  return m[1]!.trim().split(/\s+/).filter(Boolean);
})();
