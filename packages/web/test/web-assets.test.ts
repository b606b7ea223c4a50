// The UI's static files as the server sends them: favicon and web manifest, the
// build's brotli and gzip copies sent to browsers that accept them (the same bytes
// once decoded), hashed assets cached for good, the page's weight budget, and no MIME
// parser in the bundle (the server parses mail: GET /api/mail/{uuid}/parsed).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { ADMIN_WEB_ROOT } from '../../server/src/http/routes/admin-page.js';
import { WEB_ROOT } from '../../server/src/http/routes/ui.js';
import { startTestServer, type TestServer } from '../../server/test/helpers/harness.js';

/** Packages that parse MIME; the bundle must contain none of them. */
const MIME_PARSERS = ['postal-mime', 'mailparser', 'emailjs-mime-parser', 'mimetext', 'eml-format', 'letterparser', 'mail-parser'];
/** What a MIME parser's code says and the UI's does not: decoding transfer encodings, walking multipart bodies. */
const MIME_MARKERS = [/quoted-printable/i, /content-transfer-encoding/i, /multipart\//i, /PostalMime/];

/** JS and CSS of the page, gzipped, at most (the web UI issue's budget). */
const BUDGET_BYTES = 60 * 1024;

function get(base: string, path: string, encoding?: string): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(new URL(path, base), { headers: encoding ? { 'accept-encoding': encoding } : {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('web UI assets', () => {
  let server: TestServer;
  let assets: string[];
  before(async () => {
    server = await startTestServer();
    const html = readFileSync(`${WEB_ROOT}index.html`, 'utf8');
    assets = [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1]!);
    assert.ok(assets.some((a) => a.endsWith('.js')) && assets.some((a) => a.endsWith('.css')), 'the built page names its script and stylesheet');
  });
  after(() => server?.close());

  it('has a favicon and a web manifest, linked from the page', async () => {
    const page = await get(server.httpUrl, '/');
    assert.match(page.body.toString(), /<link rel="icon" href="\/favicon.svg" type="image\/svg\+xml"/);
    assert.match(page.body.toString(), /<link rel="manifest" href="\/manifest.webmanifest"/);
    const icon = await get(server.httpUrl, '/favicon.svg');
    assert.equal(icon.status, 200);
    assert.match(String(icon.headers['content-type']), /^image\/svg\+xml/);
    const manifest = await get(server.httpUrl, '/manifest.webmanifest');
    assert.equal(manifest.status, 200);
    assert.equal(JSON.parse(manifest.body.toString()).name, 'temp-inbox');
  });

  it('sends the brotli or gzip copy to a browser that accepts it, the same bytes once decoded, cached for good', async () => {
    for (const path of assets) {
      const plain = await get(server.httpUrl, path);
      assert.equal(plain.status, 200);
      assert.equal(plain.headers['content-encoding'], undefined);
      assert.equal(plain.headers['cache-control'], 'public, max-age=31536000, immutable');
      const br = await get(server.httpUrl, path, 'br, gzip');
      assert.equal(br.headers['content-encoding'], 'br', path);
      assert.ok(brotliDecompressSync(br.body).equals(plain.body), `${path}: brotli copy`);
      assert.ok(br.body.length < plain.body.length / 2);
      const gz = await get(server.httpUrl, path, 'gzip');
      assert.equal(gz.headers['content-encoding'], 'gzip', path);
      assert.ok(gunzipSync(gz.body).equals(plain.body), `${path}: gzip copy`);
    }
  });

  it(`weighs at most ${BUDGET_BYTES / 1024} KiB of JS and CSS gzipped`, (t) => {
    const total = assets.reduce((n, a) => n + statSync(`${WEB_ROOT}${a.slice(1)}.gz`).size, 0);
    t.diagnostic(`JS + CSS gzipped: ${(total / 1024).toFixed(1)} KiB`);
    assert.ok(total <= BUDGET_BYTES, `${total} bytes`);
  });
});

describe('web UI bundle', () => {
  it('carries no MIME parser: no parser package among the sources of the built scripts, no MIME decoding in them', () => {
    for (const root of [WEB_ROOT, ADMIN_WEB_ROOT]) {
      const dir = `${root}assets/`;
      const scripts = readdirSync(dir).filter((f) => f.endsWith('.js'));
      assert.ok(scripts.length > 0, `${dir} has the built scripts`);
      for (const file of scripts) {
        const map = JSON.parse(readFileSync(`${dir}${file}.map`, 'utf8')) as { sources: string[] };
        const parsers = map.sources.filter((src) => MIME_PARSERS.some((p) => src.includes(`node_modules/${p}/`)));
        assert.deepEqual(parsers, [], `${file} is built from a MIME parser`);
        const code = readFileSync(`${dir}${file}`, 'utf8');
        assert.deepEqual(MIME_MARKERS.filter((m) => m.test(code)).map(String), [], `${file} decodes MIME`);
      }
    }
  });
});
