// After `vite build`: a brotli (.br) and a gzip (.gz) copy of every text file in
// dist and dist-admin (the admin page), at the highest levels, which the server sends to browsers that accept them
// (@fastify/static preCompressed) instead of compressing on every request.
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

const dists = ['../dist/', '../dist-admin/'].map((d) => new URL(d, import.meta.url).pathname);
const TEXT = /\.(js|css|html|svg|webmanifest|json)$/;

function walk(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) walk(path);
    else if (TEXT.test(entry.name) && statSync(path).size > 0) {
      const bytes = readFileSync(path);
      writeFileSync(`${path}.br`, brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length } }));
      writeFileSync(`${path}.gz`, gzipSync(bytes, { level: 9 }));
    }
  }
}
for (const dist of dists) walk(dist);
