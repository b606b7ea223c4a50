// The temp-inbox command as npm installs it: the link npm made in node_modules/.bin,
// run directly (its shebang, its mode, and its import of ../dist/cli.js through the
// symlink), and `npm exec temp-inbox`, against a service this test starts. One inbox
// goes through new, wait --code, list, read and delete, each checked for its exit code
// and exact output; then the documented failures: 1 refused, 2 usage, 3 timeout.
// (cli.test.ts runs bin/temp-inbox.js with node for every option of every command.)
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, lstatSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { TempInbox } from '../../server/src/start-temp-inbox.js';
import { startService } from './helpers/service.js';
import { send } from './helpers/mail.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** Where npm links the package's "bin" for the workspace. */
const LINKED = `${ROOT}node_modules/.bin/temp-inbox`;
const BUILT = fileURLToPath(new URL('../dist/cli.js', import.meta.url));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

const running = new Set<ChildProcess>();

/** Starts the command (no shell; TEMP_INBOX_* from this process are not passed on). */
function start(command: string, args: string[], env: Record<string, string> = {}): { child: ChildProcess; done: Promise<Run> } {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TEMP_INBOX_') && k !== 'NODE_TEST_CONTEXT' && k !== 'NODE_OPTIONS'));
  const child = spawn(command, args, { cwd: ROOT, env: { ...base, npm_config_update_notifier: 'false', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<Run>((resolve) =>
    child.on('close', (code) => {
      running.delete(child);
      resolve({ code, stdout, stderr: stderr.replace(/^npm warn Unknown user config "nodedir".*\n/gm, '') });
    }),
  );
  return { child, done };
}

/** The linked bin, executed as a shell would (no `node` in front). */
const bin = (args: string[], env?: Record<string, string>) => start(LINKED, args, env).done;

describe('the temp-inbox bin as npm links it', { timeout: 120_000 }, () => {
  let server: TempInbox;
  let url: string;
  before(async () => {
    assert.ok(existsSync(BUILT), `the CLI is not built at ${BUILT}: run npm run build`);
    server = await startService();
    url = server.url;
  });
  after(async () => {
    for (const child of running) child.kill('SIGKILL');
    await server?.stop();
  });

  it('is a symlink npm made to the package bin, executable, with a node shebang', () => {
    assert.ok(lstatSync(LINKED).isSymbolicLink(), `${LINKED} is not a link`);
    assert.equal(realpathSync(LINKED), realpathSync(fileURLToPath(new URL('../bin/temp-inbox.js', import.meta.url))));
    assert.ok(statSync(LINKED).mode & 0o111, 'executable');
    assert.equal(readFileSync(LINKED, 'utf8').split('\n')[0], '#!/usr/bin/env node');
  });

  it('new, wait --code, list, read, delete: exit 0 and their output; then the token is refused (exit 1)', async () => {
    // new
    const made = await bin(['new', '--json', '--url', url]);
    assert.equal(made.code, 0, made.stderr);
    assert.equal(made.stderr, '');
    const { address, token, jwt } = JSON.parse(made.stdout) as { address: string; token: string; jwt: string };
    assert.match(address, new RegExp(`^[a-z0-9]+@${server.domain.replace(/\./g, '\\.')}$`));
    assert.equal(jwt, token);
    assert.equal(made.stdout, `${JSON.stringify({ address, token, jwt }, null, 2)}\n`);

    // wait --code: started before the mail exists (--since 0: the empty inbox's mail from now on), so it waits.
    const auth = ['--url', url, '--token', token];
    const waiting = start(LINKED, ['wait', '--code', '--since', '0', '--timeout', '30s', ...auth]);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(waiting.child.exitCode, null, 'wait has not returned before the mail exists');
    await send(server, { to: address, subject: 'Your sign-in code', text: 'Hello,\nyour code is 482913.\nIt expires in 10 minutes.\n' });
    const code = await waiting.done;
    assert.deepEqual(code, { code: 0, stdout: '482913\n', stderr: '' });

    // list (token from the environment this time)
    const listed = await bin(['list'], { TEMP_INBOX_URL: url, TEMP_INBOX_TOKEN: token });
    assert.equal(listed.code, 0, listed.stderr);
    const line = /^([0-9a-f-]{36}) {2,}(\d+) {2}(\S+) {2}app@example\.com {2}Your sign-in code\n$/.exec(listed.stdout);
    assert.ok(line, `one line for the one mail: ${JSON.stringify(listed.stdout)}`);
    const [, uuid, id, createdAt] = line;
    assert.ok(!Number.isNaN(Date.parse(createdAt!)), createdAt);

    // read: the summary and the text; --text alone
    const read = await bin(['read', uuid!, ...auth]);
    assert.equal(read.code, 0, read.stderr);
    assert.equal(
      read.stdout,
      [`From: App <app@example.com>`, `To: ${address}`, 'Subject: Your sign-in code', read.stdout.match(/^Date: .*$/m)![0], `Id: ${id} (uuid ${uuid})`, 'Codes: 482913', '', 'Hello,', 'your code is 482913.', 'It expires in 10 minutes.', ''].join('\n'),
    );
    const text = await bin(['read', uuid!, '--text', ...auth]);
    assert.deepEqual(text, { code: 0, stdout: 'Hello,\nyour code is 482913.\nIt expires in 10 minutes.\n', stderr: '' });

    // delete
    const deleted = await bin(['delete', ...auth]);
    assert.deepEqual(deleted, { code: 0, stdout: `Deleted the inbox ${address} and all its mail.\n`, stderr: '' });
    const gone = await bin(['list', ...auth]);
    assert.equal(gone.code, 1);
    assert.equal(gone.stdout, '');
    assert.match(gone.stderr, /^temp-inbox: The service refused \(HTTP 401\): .+\.\n$/);
  });

  it('delete-address, the 0.x name, still deletes', async () => {
    const made = await bin(['new', '--env', '--url', url]);
    assert.equal(made.code, 0, made.stderr);
    const vars = Object.fromEntries([...made.stdout.matchAll(/^export (TEMP_INBOX_\w+)='([^']*)'$/gm)].map((m) => [m[1]!, m[2]!]));
    assert.deepEqual(Object.keys(vars), ['TEMP_INBOX_URL', 'TEMP_INBOX_ADDRESS', 'TEMP_INBOX_TOKEN', 'TEMP_INBOX_JWT']);
    const deleted = await bin(['delete-address'], vars);
    assert.deepEqual(deleted, { code: 0, stdout: `Deleted the inbox ${vars['TEMP_INBOX_ADDRESS']} and all its mail.\n`, stderr: '' });
  });

  it('exit 2 for a usage error and 3 when no mail comes in time, each with one sentence on stderr', async () => {
    const made = JSON.parse((await bin(['new', '--json', '--url', url])).stdout) as { token: string };
    const usage = await bin(['read', '--url', url, '--token', made.token]);
    assert.deepEqual(usage, { code: 2, stdout: '', stderr: 'temp-inbox: "read" needs the uuid of a mail (see "temp-inbox list"). Run "temp-inbox read --help" for usage.\n' });
    const timeout = await bin(['wait', '--code', '--timeout', '500ms', '--url', url, '--token', made.token]);
    assert.equal(timeout.code, 3);
    assert.equal(timeout.stdout, '');
    assert.match(timeout.stderr, /^temp-inbox: [^\n]+\.\n$/);
  });

  it('npm exec temp-inbox runs the same bin', async () => {
    const made = await start('npm', ['exec', '--offline', '--', 'temp-inbox', 'new', '--json', '--name', 'via-npm-exec', '--strict', '--url', url]).done;
    assert.equal(made.code, 0, made.stderr);
    const { address, token } = JSON.parse(made.stdout) as { address: string; token: string };
    assert.equal(address, `via-npm-exec@${server.domain}`);
    const listed = await start('npm', ['exec', '--offline', '--', 'temp-inbox', 'list', '--url', url, '--token', token]).done;
    assert.deepEqual({ code: listed.code, stdout: listed.stdout }, { code: 0, stdout: `The inbox via-npm-exec@${server.domain} has no mail.\n` });
  });
});
