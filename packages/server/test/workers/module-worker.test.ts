// Where a worker thread's module comes from (workers/module-worker.ts): beside a built
// caller, the built .js; beside a source caller, the .ts through tsx, unless
// TEMP_INBOX_WORKERS=dist (npm test, with the build current) and the build has the file.
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { moduleWorkerUrl, NO_REQUIRE_ESM, workerExecArgv } from '../../src/workers/module-worker.js';

const runner = new URL('../../src/mail/parse/parse-runner.ts', import.meta.url).href;
const built = new URL('../../dist/mail/parse/parse-worker.js', import.meta.url);
const saved = process.env['TEMP_INBOX_WORKERS'];
afterEach(() => {
  if (saved === undefined) delete process.env['TEMP_INBOX_WORKERS'];
  else process.env['TEMP_INBOX_WORKERS'] = saved;
});

describe('worker modules', () => {
  it('a built caller gets the built module, with no flags', () => {
    const url = moduleWorkerUrl(built.href.replace('parse-worker.js', 'parse-runner.js'), 'parse-worker');
    assert.equal(url.href, built.href);
    assert.deepEqual(workerExecArgv(url), [NO_REQUIRE_ESM]);
  });

  it('a source caller gets the source module through tsx unless TEMP_INBOX_WORKERS=dist', () => {
    delete process.env['TEMP_INBOX_WORKERS'];
    const url = moduleWorkerUrl(runner, 'parse-worker');
    assert.equal(url.href, new URL('../../src/mail/parse/parse-worker.ts', import.meta.url).href);
    assert.deepEqual(workerExecArgv(url), ['--import', 'tsx', NO_REQUIRE_ESM]);
  });

  it('with TEMP_INBOX_WORKERS=dist, the build of the same module when it exists, else the source', (t) => {
    process.env['TEMP_INBOX_WORKERS'] = 'dist';
    if (!existsSync(fileURLToPath(built))) return t.skip('no build (npm run build makes it)');
    assert.equal(moduleWorkerUrl(runner, 'parse-worker').href, built.href);
    const missing = moduleWorkerUrl(runner, 'no-such-worker');
    assert.equal(missing.href, new URL('../../src/mail/parse/no-such-worker.ts', import.meta.url).href);
    // A caller outside the server's source tree keeps its own source.
    assert.equal(moduleWorkerUrl('file:///elsewhere/src/x.ts', 'w').href, 'file:///elsewhere/src/w.ts');
  });

  it('a piscina pool given those flags loads its ES module with import(), never require(): ending a thread mid-require aborted the process', async () => {
    // piscina require()s a task file first; since Node 20.19 that loads an ES module
    // synchronously, and a pool destroyed while a thread was in that load ended the process
    // with a V8 fatal error (reproduced with pools of the built parse worker destroyed 0 to
    // 150 ms after their start, three processes at once: 1 abort in 6 runs of 100).
    const url = new URL('../fixtures/workers/load-probe.mjs', import.meta.url);
    const pool = new Piscina<void, { requireEsm: string; execArgv: string[] }>({
      filename: url.href,
      minThreads: 1,
      maxThreads: 1,
      execArgv: workerExecArgv(url),
      atomics: 'disabled',
    });
    try {
      const seen = await pool.run();
      assert.equal(seen.requireEsm, 'ERR_REQUIRE_ESM', 'require() of an ES module is refused in the thread');
      assert.deepEqual(seen.execArgv, [NO_REQUIRE_ESM]);
    } finally {
      await pool.destroy();
    }
  });
});
