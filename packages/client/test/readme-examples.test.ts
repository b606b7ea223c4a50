// The SDK and CLI examples of packages/client/README.md and of the main README's
// SDK/CLI section, run exactly as written against a real service: each ```ts block as
// a script (tsx) after a type check, each ```js block as a plain `.mjs` file with node (no
// TypeScript loader: what runs there runs in a user's JavaScript file), each ```sh block
// with bash. A comment line right
// before a block may say how: `<!-- example: test -->` (a node:test file),
// `<!-- example: output /regex/flags -->` (its output must match), or
// `<!-- example: skip — reason -->` (not run, e.g. it needs Vitest). The directory they
// run in has what a user's project would: the packages (linked), nodemailer, an
// `app.ts` whose signUp() makes "the application" send a sign-up mail over SMTP, and a
// `trigger-signup` command that does the same from a shell.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTempInbox, type TempInbox } from '../../server/src/start-temp-inbox.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const TSX = import.meta.resolve('tsx');
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');

interface Example {
  file: string;
  line: number;
  lang: 'ts' | 'js' | 'sh';
  code: string;
  mode: 'run' | 'test' | 'skip';
  output?: RegExp;
  reason?: string;
}

/** The fenced ts/sh blocks of a Markdown file (only between the markers when given), with their example comment. */
function examples(file: string, markers?: [string, string]): Example[] {
  let text = readFileSync(join(ROOT, file), 'utf8');
  let offset = 0;
  if (markers) {
    const start = text.indexOf(markers[0]);
    const end = text.indexOf(markers[1]);
    assert.ok(start !== -1 && end > start, `${file} has no ${markers[0]} … ${markers[1]} section`);
    offset = text.slice(0, start).split('\n').length - 1;
    text = text.slice(start, end);
  }
  const lines = text.split('\n');
  const found: Example[] = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = /^```(ts|js|sh)\s*$/.exec(lines[i]!);
    if (!fence) continue;
    const endLine = lines.indexOf('```', i + 1);
    assert.ok(endLine !== -1, `${file}:${offset + i + 1}: unclosed block`);
    const code = lines.slice(i + 1, endLine).join('\n') + '\n';
    const comment = /^<!-- example: (.*) -->$/.exec(lines[i - 1] ?? '')?.[1] ?? '';
    const example: Example = { file, line: offset + i + 1, lang: fence[1] as Example['lang'], code, mode: 'run' };
    if (comment.startsWith('skip')) Object.assign(example, { mode: 'skip', reason: comment.replace(/^skip\s*—?\s*/, '') });
    else if (comment === 'test') example.mode = 'test';
    else if (comment.startsWith('output ')) {
      const m = /^output \/(.*)\/([a-z]*)$/.exec(comment);
      assert.ok(m, `${file}:${offset + i}: bad example comment: ${comment}`);
      example.output = new RegExp(m[1]!, m[2]);
    } else assert.equal(comment, '', `${file}:${offset + i}: unknown example comment: ${comment}`);
    found.push(example);
    i = endLine;
  }
  return found;
}

const CLIENT_README = examples('packages/client/README.md');
const MAIN_README = examples('README.md', ['<!-- sdk-cli-examples:start -->', '<!-- sdk-cli-examples:end -->']);

function run(command: string, args: string[], cwd: string, env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    // Not as a child of this test run (node:test would report to it instead of printing).
    const { NODE_TEST_CONTEXT: _context, ...outer } = process.env;
    const child = spawn(command, args, { cwd, env: { ...outer, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const killer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.on('close', (code) => {
      clearTimeout(killer);
      resolve({ code, out: code === 0 ? out : `${out}\n--- stderr ---\n${err}` });
    });
  });
}

describe('README examples, as written', { timeout: 600_000 }, () => {
  let server: TempInbox;
  let dir: string;
  let env: Record<string, string>;

  before(async () => {
    assert.ok(existsSync(join(ROOT, 'packages/client/dist/index.js')), 'the client is not built: run npm run build');
    server = await startTempInbox();
    dir = mkdtempSync(join(tmpdir(), 'temp-inbox-readme-'));
    mkdirSync(join(dir, 'node_modules/@temp-inbox'), { recursive: true });
    mkdirSync(join(dir, 'node_modules/.bin'));
    mkdirSync(join(dir, 'node_modules/@types'));
    for (const pkg of ['api', 'server', 'client']) symlinkSync(join(ROOT, 'packages', pkg), join(dir, 'node_modules/@temp-inbox', pkg));
    for (const pkg of ['nodemailer', '@types/nodemailer', '@types/node']) symlinkSync(join(ROOT, 'node_modules', pkg), join(dir, 'node_modules', pkg));
    symlinkSync(join(ROOT, 'packages/client/bin/temp-inbox.js'), join(dir, 'node_modules/.bin/temp-inbox'));
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'readme-examples', private: true, type: 'module' }));
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2022', 'DOM', 'ESNext.Disposable'], types: ['node'], strict: true, noEmit: true, skipLibCheck: true } }),
    );
    // "The application": a sign-up mail with a code and a verification link.
    const send = `import nodemailer from 'nodemailer';
export async function signUp(address: string): Promise<void> {
  const code = String(100000 + Math.floor(Math.random() * 900000));
  const token = Math.random().toString(36).slice(2, 10);
  const smtp = nodemailer.createTransport({ host: '127.0.0.1', port: Number(process.env.TEMP_INBOX_SMTP_PORT), secure: false, ignoreTLS: true });
  await smtp.sendMail({
    from: 'App <noreply@app.example>',
    to: address,
    subject: 'Welcome aboard: verify your email',
    text: \`Your verification code is \${code}.\\nOr open https://app.example/verify?t=\${token}\\n\\nUnsubscribe: https://app.example/unsubscribe\`,
  });
  smtp.close();
}
`;
    writeFileSync(join(dir, 'app.ts'), send);
    // The same for the JavaScript examples, which run without a TypeScript loader.
    writeFileSync(join(dir, 'app.mjs'), send.replace('(address: string): Promise<void>', '(address)'));
    writeFileSync(join(dir, 'trigger-signup'), `#!/usr/bin/env bash\nexec node --import ${JSON.stringify(TSX)} -e 'import("./app.ts").then((m) => m.signUp(process.argv[1]))' "$1"\n`);
    chmodSync(join(dir, 'trigger-signup'), 0o755);
    env = { TEMP_INBOX_URL: server.url, TEMP_INBOX_SMTP_PORT: String(server.smtpPort), npm_config_offline: 'true', npm_config_update_notifier: 'false', npm_config_fund: 'false' };
    for (const name of ['TEMP_INBOX_TOKEN', 'TEMP_INBOX_JWT', 'TEMP_INBOX_ADDRESS']) env[name] = '';
  });
  after(async () => {
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('finds the examples: the client README covers the SDK, withInbox, startTempInbox and the CLI; the main README the SDK and CLI', () => {
    assert.ok(CLIENT_README.filter((e) => e.lang === 'ts' && e.mode !== 'skip').length >= 3);
    assert.ok(CLIENT_README.filter((e) => e.lang === 'sh' && e.mode !== 'skip').length >= 2);
    assert.ok(CLIENT_README.some((e) => e.mode === 'test'));
    assert.deepEqual(
      MAIN_README.map((e) => e.lang),
      ['ts', 'sh'],
    );
    for (const e of [...CLIENT_README, ...MAIN_README]) if (e.mode === 'skip') assert.ok(e.reason, `${e.file}:${e.line} is skipped without a reason`);
  });

  it('the TypeScript examples type-check', async () => {
    const files: string[] = [];
    for (const [i, e] of [...CLIENT_README, ...MAIN_README].entries()) {
      if (e.lang !== 'ts' || e.mode === 'skip') continue;
      const file = `check-${i}.ts`;
      writeFileSync(join(dir, file), e.code);
      files.push(file);
    }
    writeFileSync(join(dir, 'tsconfig.check.json'), JSON.stringify({ extends: './tsconfig.json', files: ['app.ts', ...files] }));
    const { code, out } = await run(process.execPath, [TSC, '-p', 'tsconfig.check.json'], dir, env);
    assert.equal(code, 0, out);
  });

  for (const e of [...CLIENT_README, ...MAIN_README]) {
    const name = `${e.file}:${e.line} (${e.lang}${e.mode === 'run' ? '' : `, ${e.mode}`})`;
    it(name, { skip: e.mode === 'skip' && e.reason }, async () => {
      const file = `example-${e.line}.${e.lang === 'js' ? 'mjs' : e.lang}`;
      writeFileSync(join(dir, file), e.code);
      const result =
        e.lang === 'sh'
          ? await run('bash', ['-euo', 'pipefail', file], dir, env)
          : e.lang === 'js'
            ? await run(process.execPath, [file], dir, env)
            : await run(process.execPath, ['--import', TSX, ...(e.mode === 'test' ? ['--test', '--test-reporter=tap'] : []), file], dir, env);
      assert.equal(result.code, 0, `${name} failed:\n${e.code}\n${result.out}`);
      if (e.output) assert.match(result.out, e.output, `${name} printed:\n${result.out}`);
      // node:test exits 0 when the file holds no test at all: there must be one, and it passed.
      if (e.mode === 'test') assert.match(result.out, /^# pass [1-9]\d*\n# fail 0\n/m, `${name} printed:\n${result.out}`);
    });
  }
});
