// Where things are: the repository root, the built server, the bench children.
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const BENCH_DIR = join(ROOT, 'bench');
export const RESULTS_DIR = join(BENCH_DIR, 'results');
export const SERVER_DIST = join(ROOT, 'packages', 'server', 'dist');
export const SERVER_MAIN = join(SERVER_DIST, 'main.js');
export const CHILDREN_DIR = fileURLToPath(new URL('../children/', import.meta.url));
export const MAILDEV_BIN = join(ROOT, 'node_modules', 'maildev', 'dist', 'bin', 'maildev.js');

/** The domain every bench server accepts mail for. */
export const DOMAIN = 'temp-inbox.localhost';
