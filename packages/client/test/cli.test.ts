// The temp-inbox command, run as users run it (node packages/client/bin/temp-inbox.js,
// the built CLI), against the whole service: every command, its --help, its output
// formats, and the documented exit codes (0 ok, 1 error, 2 usage, 3 timeout).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { TempInbox } from '../../server/src/start-temp-inbox.js';
import { METRICS_TOKEN, untilPushOpen } from '../../server/test/helpers/harness.js';
import { startService } from './helpers/service.js';
import { send } from './helpers/mail.js';

const BIN = fileURLToPath(new URL('../bin/temp-inbox.js', import.meta.url));
const BUILT = fileURLToPath(new URL('../dist/cli.js', import.meta.url));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

const running = new Set<ReturnType<typeof spawn>>();

/** Runs the command; resolves with its exit code, output and run time. */
function cli(args: string[], env: Record<string, string | undefined> = {}): Promise<Run> {
  return new Promise((resolve) => {
    const started = performance.now();
    const childEnv: Record<string, string | undefined> = { ...process.env, TEMP_INBOX_URL: undefined, TEMP_INBOX_TOKEN: undefined, TEMP_INBOX_JWT: undefined, ...env };
    const child = spawn(process.execPath, [BIN, ...args], { env: Object.fromEntries(Object.entries(childEnv).filter(([, v]) => v !== undefined)) as NodeJS.ProcessEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    running.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => {
      running.delete(child);
      resolve({ code, stdout, stderr, ms: performance.now() - started });
    });
  });
}

/** Every line the command writes to stderr is a sentence: "temp-inbox: " then text ending in a period. */
function assertSentence(run: Run): void {
  const lines = run.stderr.trim().split('\n');
  assert.ok(lines.length >= 1 && lines[0]!.startsWith('temp-inbox: '), run.stderr);
  assert.match(lines[0]!, /^temp-inbox: [A-Z"].*[.)]$/, `not a sentence: ${lines[0]}`);
}

describe('temp-inbox CLI', { timeout: 180_000 }, () => {
  let server: TempInbox;
  let url: Record<string, string>;

  before(async () => {
    assert.ok(existsSync(BUILT), `the CLI is not built at ${BUILT}: run npm run build`);
    server = await startService({ env: { METRICS_TOKEN } });
    url = { TEMP_INBOX_URL: server.url };
  });
  after(async () => {
    for (const child of running) child.kill();
    await server?.stop();
  });

  it('--help on the command and on each subcommand, exit 0', async () => {
    const main = await cli(['--help']);
    assert.equal(main.code, 0);
    assert.match(main.stdout, /^Usage: temp-inbox <command> \[options\]/);
    for (const command of ['new', 'wait', 'list', 'read', 'delete']) assert.match(main.stdout, new RegExp(`\\n  ${command} `));
    assert.match(main.stdout, /Exit codes: 0 done, 1 error .*\n2 usage error, 3 timeout/);
    for (const command of ['new', 'wait', 'list', 'read', 'delete']) {
      const help = await cli([command, '--help']);
      assert.equal(help.code, 0, command);
      assert.match(help.stdout, new RegExp(`^Usage: temp-inbox ${command}`), command);
      assert.deepEqual((await cli(['help', command])).stdout, help.stdout);
      assert.equal((await cli([command, '-h'])).stdout, help.stdout);
    }
    const wait = await cli(['wait', '--help']);
    for (const option of ['--code', '--link', '--from', '--to', '--subject', '--timeout', '--since', '--any', '--json']) assert.match(wait.stdout, new RegExp(`  ${option}\\b`), option);
  });

  it('usage errors exit 2 with a sentence', async () => {
    const nothing = await cli([]);
    assert.equal(nothing.code, 2);
    assert.match(nothing.stderr, /^Usage: temp-inbox/);
    const cases: [string[], RegExp][] = [
      [['frobnicate'], /"frobnicate" is not a command\. Run "temp-inbox --help" for usage\.$/],
      [['--bogus'], /"--bogus" is not a command/],
      [['new', '--bogus'], /Unknown option '--bogus'.* Run "temp-inbox new --help" for usage\.$/],
      [['new', '--json', '--env'], /Choose one of --json and --env\./],
      [['wait'], /"wait" needs the inbox's token: pass --token, or set TEMP_INBOX_TOKEN/],
      [['wait', '--token', 't', '--timeout', 'soon'], /The --timeout option takes a duration such as 30s, 500ms, 2m, 1.5h or 1d, not "soon"\./],
      [['wait', '--token', 't', '--timeout', '0s'], /The --timeout option takes a duration such as .*, not "0s"\./],
      [['wait', '--token', 't', '--since', '-1'], /--since/],
      [['wait', '--token', 't', '--since', '3', '--any'], /Choose one of --since and --any\./],
      [['wait', '--token', 't', '--code', '--link'], /Choose one of --code and --link\./],
      [['wait', '--token', 't', 'extra'], /"wait" takes no arguments/],
      [['read', '--token', 't'], /"read" needs the uuid of a mail/],
      [['read', 'a', 'b', '--token', 't'], /"read" takes one mail's uuid, not "b"\./],
      [['read', 'a', '--text', '--raw', '--token', 't'], /Choose one of --text, --html, --raw and --json/],
      [['list', '--limit', '500', '--token', 't'], /The --limit option takes a whole number from 1 to 100/],
      [['help', 'nope'], /"nope" is not a command/],
    ];
    for (const [args, message] of cases) {
      const run = await cli(args, url);
      assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`);
      assert.match(run.stderr.trimEnd(), message, args.join(' '));
      assertSentence(run);
      assert.equal(run.stdout, '');
    }
  });

  it('the options for every command may come before the command too', async () => {
    const made = await cli(['--url', server.url, 'new', '--json']);
    assert.equal(made.code, 0, made.stderr);
    const { token, address } = JSON.parse(made.stdout) as { token: string; address: string };
    const listed = await cli([`--url=${server.url}`, '--token', token, 'list', '--json']);
    assert.equal(listed.code, 0, listed.stderr);
    assert.deepEqual(JSON.parse(listed.stdout), { count: 0, mails: [] });
    const settings = await cli(['--token', token, '--url', server.url, 'list']);
    assert.equal(settings.code, 0, `${address}: ${settings.stderr}`);
    // An option of one command only is not among them; nor is a command missing after them.
    assert.equal((await cli(['--json', 'new'], url)).code, 2);
    assert.match((await cli(['--url', server.url])).stderr, /"--url" is not a command/);
  });

  it('new: two sentences by default, --json, --env for eval; --strict fails on a taken name (exit 1)', async () => {
    const plain = await cli(['new', '--name', 'cli-plain'], url);
    assert.equal(plain.code, 0, plain.stderr);
    assert.match(
      plain.stdout,
      new RegExp(`^Created the inbox cli-plain@${server.domain.replace('.', '\\.')}\\.\\nIts token \\(for --token or TEMP_INBOX_TOKEN\\) is ([\\w-]+\\.[\\w-]+\\.[\\w-]+)\\nOpen it in a browser: ${server.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/#token=\\1\\n$`),
    );
    const json = await cli(['new', '--json', '--url', server.url]);
    const created = JSON.parse(json.stdout) as { address: string; token: string; jwt: string };
    assert.match(created.address, new RegExp(`^[a-z0-9]{10}@${server.domain}$`));
    assert.equal(created.jwt, created.token);
    const env = await cli(['new', '--name', 'cli-env', '--env'], url);
    assert.match(env.stdout, /^export TEMP_INBOX_URL='http:\/\/127\.0\.0\.1:\d+'\nexport TEMP_INBOX_ADDRESS='cli-env@[^']+'\nexport TEMP_INBOX_TOKEN='[\w.-]+'\nexport TEMP_INBOX_JWT='[\w.-]+'\n$/);
    // As documented: eval it in a shell, then the other commands need no options.
    const shell = await new Promise<string>((resolve) => {
      const child = spawn('bash', ['-c', `eval "$(node ${JSON.stringify(BIN)} new --name cli-eval --env)" && node ${JSON.stringify(BIN)} list && echo "$TEMP_INBOX_ADDRESS"`], { env: { ...process.env, ...url }, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.on('close', () => resolve(out));
    });
    assert.equal(shell, `The inbox cli-eval@${server.domain} has no mail.\ncli-eval@${server.domain}\n`);
    const fallback = await cli(['new', '--name', 'cli-plain', '--json'], url);
    assert.notEqual((JSON.parse(fallback.stdout) as { address: string }).address, `cli-plain@${server.domain}`);
    const strict = await cli(['new', '--name', 'cli-plain', '--strict'], url);
    assert.equal(strict.code, 1);
    assert.match(strict.stderr, /^temp-inbox: The service refused \(HTTP 409\): .+\.\n$/);
  });

  it('wait: by default only mail that arrives after it starts; --any and --since take earlier mail', async () => {
    const { token, address } = JSON.parse((await cli(['new', '--json'], url)).stdout) as { token: string; address: string };
    const env = { ...url, TEMP_INBOX_TOKEN: token };
    await send(server, { from: 'Shop <shop@example.com>', to: address, subject: 'Earlier mail', text: 'Your code is 314159.' });
    const none = await cli(['wait', '--timeout', '1s'], env);
    assert.equal(none.code, 3, none.stderr);
    assert.match(none.stderr, new RegExp(`^temp-inbox: No mail reached ${address} within 1 s\\.\\n$`));
    assert.ok(none.ms >= 1000, `exited after ${none.ms} ms`);
    const any = await cli(['wait', '--any', '--code', '--timeout', '5s'], env);
    assert.equal(any.code, 0, any.stderr);
    assert.equal(any.stdout, '314159\n');
    const mail = JSON.parse((await cli(['wait', '--any', '--json'], env)).stdout) as { id: number; subject: string; from: { address: string } };
    assert.equal(mail.subject, 'Earlier mail');
    assert.equal(mail.from.address, 'shop@example.com');
    assert.equal((await cli(['wait', '--since', String(mail.id - 1), '--code'], env)).stdout, '314159\n');
    assert.equal((await cli(['wait', '--since', String(mail.id), '--timeout', '300ms'], env)).code, 3);

    // Mail that arrives while it waits: sent once the command's poll is held by the service (its
    // push_open gauge), so after the command has taken "now" as its start.
    const waiting = cli(['wait', '--code', '--timeout', '20s'], env);
    await untilPushOpen({ httpUrl: server.url }, { wait: 1 });
    await send(server, { to: address, subject: 'Sign in', text: 'Your login code: 908172' });
    const code = await waiting;
    assert.equal(code.code, 0, code.stderr);
    assert.equal(code.stdout, '908172\n');
  });

  it('wait: --from, --to, --subject, --link [TEXT], the default view; the timeout exit code 3 after exactly --timeout', async () => {
    const { token, address } = JSON.parse((await cli(['new', '--json'], url)).stdout) as { token: string; address: string };
    const env = { ...url, TEMP_INBOX_TOKEN: token };
    await send(server, { from: 'News <news@letters.example>', to: address, subject: 'Weekly', text: 'https://letters.example/read https://letters.example/unsubscribe' });
    await send(server, {
      from: 'Accounts <accounts@app.example>',
      to: `Dana <${address}>`,
      subject: 'Confirm your address',
      html: '<a href="https://app.example/unsubscribe">Unsubscribe</a> <a href="https://app.example/confirm?t=42">Confirm</a> Code: 777001',
    });
    assert.equal((await cli(['wait', '--any', '--from', 'ACCOUNTS', '--code'], env)).stdout, '777001\n');
    assert.equal((await cli(['wait', '--any', '--to', 'dana', '--link'], env)).stdout, 'https://app.example/confirm?t=42\n');
    assert.equal((await cli(['wait', '--any', '--link'], env)).stdout, 'https://letters.example/read\n', 'the oldest mail with a link');
    assert.equal((await cli(['wait', '--any', '--link', 'unsubscribe', '--subject', 'confirm'], env)).stdout, 'https://app.example/unsubscribe\n');
    assert.equal((await cli(['wait', '--any', '--contains', 'confirm'], env)).stdout, 'https://app.example/confirm?t=42\n');
    const view = await cli(['wait', '--any', '--subject', 'weekly'], env);
    assert.match(view.stdout, /^From: News <news@letters\.example>\nTo: .+\nSubject: Weekly\nDate: .+\nId: \d+ \(uuid [0-9a-f-]{36}\)\nLinks: https:\/\/letters\.example\/read https:\/\/letters\.example\/unsubscribe\n\nhttps:\/\/letters\.example\/read/);
    const timedOut = await cli(['wait', '--any', '--subject', 'never', '--timeout', '1500ms'], env);
    assert.equal(timedOut.code, 3);
    assert.match(timedOut.stderr, /^temp-inbox: No mail with a subject containing "never" reached .+ within 1500 ms\.\n$/);
    assert.ok(timedOut.ms >= 1500, `exited after ${timedOut.ms} ms`);
    // And not much later: the timeout, plus twice what a whole run that waits for nothing took on
    // this machine just now (start, open, one poll, exit), plus a second. Far below the 30 s default.
    const bound = 1500 + 2 * view.ms + 1000;
    assert.ok(timedOut.ms < bound, `exited after ${timedOut.ms.toFixed(0)} ms, past ${bound.toFixed(0)} ms (1500 ms, twice a ${view.ms.toFixed(0)} ms run, 1 s)`);
  });

  it('list, read (default, --text, --html, --raw, --json) and delete', async () => {
    const { token, address } = JSON.parse((await cli(['new', '--json'], url)).stdout) as { token: string; address: string };
    const env = { ...url, TEMP_INBOX_TOKEN: token };
    const empty = await cli(['list'], env);
    assert.equal(empty.stdout, `The inbox ${address} has no mail.\n`);
    await send(server, { to: address, subject: 'Plain one', text: 'Just text.' });
    await send(server, { to: address, subject: 'Rich one', text: 'Text part.', html: '<p>HTML part.</p>', attachments: [{ filename: 'a.txt', content: 'hello' }] });
    const listed = await cli(['list'], env);
    const lines = listed.stdout.trim().split('\n');
    assert.equal(lines.length, 2);
    assert.match(lines[0]!, /^[0-9a-f-]{36} +\d+ +\d{4}-\d\d-\d\dT[\d:.]+Z +app@example\.com +Rich one$/);
    assert.match(lines[1]!, /Plain one$/);
    const json = JSON.parse((await cli(['list', '--json', '--limit', '1'], env)).stdout) as { count: number; mails: { uuid: string; metadata: { subject: string } }[] };
    assert.equal(json.count, 2);
    assert.equal(json.mails.length, 1);
    const rich = json.mails[0]!.uuid;
    const plain = lines[1]!.split(' ')[0]!;

    const read = await cli(['read', rich], env);
    assert.match(read.stdout, /^From: App <app@example\.com>\n/);
    assert.match(read.stdout, /\nAttachment: a\.txt \(text\/plain, 5 bytes, id [^)]+\)\n\nText part\.\n$/);
    assert.equal((await cli(['read', rich, '--text'], env)).stdout, 'Text part.\n');
    assert.equal((await cli(['read', rich, '--html'], env)).stdout, '<p>HTML part.</p>\n');
    const raw = await cli(['read', rich, '--raw'], env);
    assert.match(raw.stdout, /^Received: /);
    assert.match(raw.stdout, /\r\nSubject: Rich one\r\n/);
    const parsed = JSON.parse((await cli(['read', rich, '--json'], env)).stdout) as { subject: string; attachments: { filename: string }[] };
    assert.equal(parsed.subject, 'Rich one');
    assert.equal(parsed.attachments[0]!.filename, 'a.txt');
    const noHtml = await cli(['read', plain, '--html'], env);
    assert.equal(noHtml.code, 1);
    assert.equal(noHtml.stderr, 'temp-inbox: This mail has no HTML part; --text shows its text.\n');
    const missing = await cli(['read', '00000000-0000-7000-8000-000000000000'], env);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /^temp-inbox: The service refused \(HTTP 404\): .+\.\n$/);

    const deleted = await cli(['delete'], env);
    assert.equal(deleted.code, 0, deleted.stderr);
    assert.equal(deleted.stdout, `Deleted the inbox ${address} and all its mail.\n`);
    const gone = await cli(['list'], env);
    assert.equal(gone.code, 1);
    assertSentence(gone);
    assert.match(gone.stderr, /HTTP 401/);
  });

  it('commands of temp-inbox before 1.0 still work: --jwt, TEMP_INBOX_JWT, delete-address, wait --link TEXT --since 0', async () => {
    const { jwt, address } = JSON.parse((await cli(['new', '--json'], url)).stdout) as { jwt: string; address: string };
    await send(server, { to: address, subject: 'Confirm', text: 'https://app.example/help https://app.example/confirm?x=1' });
    assert.equal((await cli(['wait', '--link', 'confirm', '--since', '0', '--jwt', jwt], url)).stdout, 'https://app.example/confirm?x=1\n');
    assert.equal((await cli(['wait', '--code', '--any', '--timeout', '1', '--url', server.url], { TEMP_INBOX_JWT: jwt })).code, 3, 'a bare --timeout is seconds');
    assert.equal((await cli(['delete-address'], { ...url, TEMP_INBOX_JWT: jwt })).code, 0);
  });

  it('an unreachable service is exit 1 with a sentence', async () => {
    // A port nothing listens on: bound, then closed again.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const run = await cli(['new', '--url', `http://127.0.0.1:${port}`]);
    assert.equal(run.code, 1);
    assert.equal(run.stderr, `temp-inbox: Could not reach the temp-inbox service at http://127.0.0.1:${port} (ECONNREFUSED).\n`);
  });
});
