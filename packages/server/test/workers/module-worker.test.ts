// Where a worker thread's module comes from (workers/module-worker.ts): beside a built
// caller, the built .js; beside a source caller, the .ts through tsx, unless
// TEMP_INBOX_WORKERS=dist (npm test, with the build current) and the build has the file.
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { moduleWorkerUrl, workerExecArgv } from '../../src/workers/module-worker.js';

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
    assert.deepEqual(workerExecArgv(url), []);
  });

  it('a source caller gets the source module through tsx unless TEMP_INBOX_WORKERS=dist', () => {
    delete process.env['TEMP_INBOX_WORKERS'];
    const url = moduleWorkerUrl(runner, 'parse-worker');
    assert.equal(url.href, new URL('../../src/mail/parse/parse-worker.ts', import.meta.url).href);
    assert.deepEqual(workerExecArgv(url), ['--import', 'tsx']);
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
});
