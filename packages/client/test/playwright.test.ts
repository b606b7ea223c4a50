// @temp-inbox/client/playwright in the real Playwright Test runner and a real Chromium
// (Debian's, never a downloaded browser): playwright/signup.spec.ts signs up on a page
// that mails a code over SMTP to the `inbox` fixture, reads it with the SDK and types it
// in. This test starts the service (startTempInbox) and runs `playwright test` on it.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TempInbox } from '../../server/src/start-temp-inbox.js';
import { startService } from './helpers/service.js';
import { CHROMIUM_PATH, serviceAvailable } from '../../server/test/helpers/services.js';

const ready = serviceAvailable('chromium');
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const CONFIG = fileURLToPath(new URL('./playwright/playwright.config.ts', import.meta.url));
const BUILT = fileURLToPath(new URL('../dist/playwright.js', import.meta.url));

describe('Playwright fixture in Chromium', { skip: !ready && 'Chromium is not installed', timeout: 180_000 }, () => {
  let server: TempInbox;
  let output: string;

  before(async () => {
    assert.ok(existsSync(BUILT), `@temp-inbox/client is not built at ${BUILT}: run npm run build`);
    server = await startService();
    output = mkdtempSync(join(tmpdir(), 'temp-inbox-playwright-'));
  });
  after(async () => {
    await server?.stop();
    if (output) rmSync(output, { recursive: true, force: true });
  });

  it('a fresh inbox per test, deleted after it; the code mailed by the page is read and submitted', async () => {
    const cli = createRequire(import.meta.url).resolve('@playwright/test/cli');
    const child = spawn(process.execPath, [cli, 'test', '--config', CONFIG], {
      cwd: ROOT,
      env: {
        ...process.env,
        TEMP_INBOX_URL: server.url,
        TEMP_INBOX_SMTP_PORT: String(server.smtpPort),
        CHROMIUM_PATH,
        PLAYWRIGHT_OUTPUT_DIR: output,
        PLAYWRIGHT_HTML_OPEN: 'never',
        CI: '1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const killer = setTimeout(() => child.kill('SIGKILL'), 150_000);
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    clearTimeout(killer);
    assert.equal(code, 0, out);
    assert.match(out, /2 passed/, out);
    assert.doesNotMatch(out, /failed|flaky|skipped/, out);
  });
});
