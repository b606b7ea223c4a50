// The CLI's usage errors say what was meant: the nearest option or command to a
// misspelt one, and the scheme a --url or TEMP_INBOX_URL lacks. Run from the source
// (through tsx) as a real process; these errors come before any request is made.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { editDistance, nearest } from '../src/cli-hints.js';

const CLI = fileURLToPath(new URL('../src/cli.ts', import.meta.url));

function cli(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CLI, ...args], {
      env: { PATH: process.env['PATH'] ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('temp-inbox CLI messages', { timeout: 120_000 }, () => {
  it('a misspelt option or command: the one meant, exit 2', async () => {
    const cases: [string[], string][] = [
      [['wait', '--tiemout', '3s', '--token', 't'], `temp-inbox: Unknown option '--tiemout'; did you mean --timeout? Run "temp-inbox wait --help" for usage.`],
      [['list', '--jsno', '--token', 't'], `temp-inbox: Unknown option '--jsno'; did you mean --json? Run "temp-inbox list --help" for usage.`],
      [['new', '--tiemout', '3s'], `temp-inbox: Unknown option '--tiemout'; --timeout is an option of "wait". Run "temp-inbox new --help" for usage.`],
      [['new', '--bogus'], `temp-inbox: Unknown option '--bogus'. Run "temp-inbox new --help" for usage.`],
      [['wiat'], `temp-inbox: "wiat" is not a command; did you mean "wait"? Run "temp-inbox --help" for usage.`],
      [['frobnicate'], `temp-inbox: "frobnicate" is not a command. Run "temp-inbox --help" for usage.`],
      [['wait', '--token', 't', '--timeout'], `temp-inbox: The --timeout option needs a value. Run "temp-inbox wait --help" for usage.`],
    ];
    for (const [args, line] of cases) {
      const run = await cli(args);
      assert.equal(run.code, 2, args.join(' '));
      assert.equal(run.stderr, `${line}\n`, args.join(' '));
      assert.equal(run.stdout, '');
    }
  });

  it('a --url or TEMP_INBOX_URL without http:// says what to add, exit 2, before any connection', async () => {
    const cases: [string[], Record<string, string>, string][] = [
      [['new', '--url', 'localhost:8080'], {}, `temp-inbox: "--url localhost:8080" has no scheme: add it, e.g. --url http://localhost:8080. Run "temp-inbox new --help" for usage.`],
      [['--url', 'mail.example.org/inbox', 'new'], {}, `temp-inbox: "--url mail.example.org/inbox" has no scheme: add it, e.g. --url http://mail.example.org/inbox. Run "temp-inbox new --help" for usage.`],
      [['new', '--url', '8080'], {}, `temp-inbox: "--url 8080" has no scheme: add it, e.g. --url http://localhost:8080. Run "temp-inbox new --help" for usage.`],
      [['new', '--url', 'ftp://example.org'], {}, `temp-inbox: "--url ftp://example.org" is not an http:// or https:// URL; e.g. --url http://example.org. Run "temp-inbox new --help" for usage.`],
      [['list', '--token', 't'], { TEMP_INBOX_URL: 'localhost:8080' }, `temp-inbox: "TEMP_INBOX_URL=localhost:8080" has no scheme: add it, e.g. TEMP_INBOX_URL=http://localhost:8080. Run "temp-inbox list --help" for usage.`],
    ];
    for (const [args, env, line] of cases) {
      const run = await cli(args, env);
      assert.equal(run.code, 2, args.join(' '));
      assert.equal(run.stderr, `${line}\n`, args.join(' '));
    }
  });

  it('edit distance counts a swap of neighbours as one edit; far words are not suggested', () => {
    assert.equal(editDistance('tiemout', 'timeout'), 1);
    assert.equal(editDistance('jsno', 'json'), 1);
    assert.equal(editDistance('', 'abc'), 3);
    assert.equal(nearest('tiemout', ['timeout', 'since', 'any']), 'timeout');
    assert.equal(nearest('bogus', ['timeout', 'since', 'any', 'json']), undefined);
    assert.equal(nearest('x', ['to', 'any']), undefined, 'a one-letter word is too short to guess from');
  });
});
