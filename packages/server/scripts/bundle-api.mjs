#!/usr/bin/env node
// `npm pack` of the server bundles @temp-inbox/api (bundleDependencies), so that its
// tarball installs alone. In the workspace the api is linked at the root's node_modules,
// where npm pack does not look for bundled packages; `link` (prepack) links it beside
// the server for the pack, `unlink` (postpack) takes that link away again.
import { existsSync, lstatSync, mkdirSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const server = join(dirname(fileURLToPath(import.meta.url)), '..');
const api = join(server, '../api');
const link = join(server, 'node_modules/@temp-inbox/api');
const isLink = () => lstatSync(link, { throwIfNoEntry: false })?.isSymbolicLink() === true;

const command = process.argv[2];
if (command === 'link') {
  if (!existsSync(join(api, 'dist/index.js'))) {
    process.stderr.write('bundle-api: packages/api/dist is not built (npm run build), so the server tarball would lack @temp-inbox/api.\n');
    process.exit(1);
  }
  if (!isLink() && !existsSync(link)) {
    mkdirSync(dirname(link), { recursive: true });
    symlinkSync('../../../api', link, 'dir');
  }
} else if (command === 'unlink') {
  if (isLink()) rmSync(link);
  if (existsSync(dirname(link)) && readdirSync(dirname(link)).length === 0) rmSync(dirname(link), { recursive: true });
} else {
  process.stderr.write('usage: bundle-api.mjs link|unlink\n');
  process.exit(2);
}
