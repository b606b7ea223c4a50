#!/usr/bin/env node
// The temp-inbox command: a disposable inbox from a shell script or CI job. Each
// command has --help; `temp-inbox --help` lists them. Exit codes: 0 done, 1 error,
// 2 usage error, 3 timeout (no matching mail in time).
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { TempInboxClient } from './client.js';
import { TempInboxError, WaitTimeoutError } from './errors.js';
import { inboxCommand, openCommand } from './cli-commands.js';
import { nearest, optionError, urlProblem } from './cli-hints.js';
import { EXIT, type Io, UsageError } from './cli-usage.js';
import { MCP_HELP, MCP_OPTIONS, mcpCommand } from './cli-mcp.js';

const COMMON = `Options for every command:
  --url URL        The service (default: $TEMP_INBOX_URL, else http://localhost:8080).
  --token TOKEN    The inbox's token (default: $TEMP_INBOX_TOKEN, else $TEMP_INBOX_JWT);
                   not used by "new". --jwt is another name for it.
  -h, --help       Show this help.

Exit codes: 0 done, 1 error (the service refused, or could not be reached),
2 usage error, 3 timeout (no matching mail in time).`;

const HELP: Record<string, string> = {
  main: `Usage: temp-inbox <command> [options]

A disposable inbox from a shell: create one, wait for its mail, take the code.

Commands:
  new      Create an inbox and print its address and token.
  wait     Wait for a mail; print it, its verification code, or its link.
  list     List the inbox's mail, newest first.
  read     Print one mail: summary and text, or its text, HTML, source or JSON.
  report   Print a mail's deliverability report; exit 1 when a section fails.
  delete   Delete the inbox and all its mail.
  sandbox  Open a sandbox (an SMTP login's inbox) and print its token.
  mcp      Serve MCP over stdio: the inbox tools for an AI agent (docs/mcp.md).
  help     Show a command's help ("temp-inbox help wait").

${COMMON}

Example:
  eval "$(temp-inbox new --env)"       # sets TEMP_INBOX_ADDRESS and TEMP_INBOX_TOKEN
  ./trigger-signup "$TEMP_INBOX_ADDRESS"
  temp-inbox wait --code --any --timeout 30s
`,
  new: `Usage: temp-inbox new [--name NAME] [--domain DOMAIN] [--strict] [--json | --env]

Creates an inbox. Without --json or --env it prints the address and the token in
two sentences.

  --name NAME      Ask for this name (the part before @). When it is taken or
                   refused, a random name is used instead, unless --strict.
  --domain DOMAIN  One of the service's domains (default: its first).
  --strict         Fail (exit 1) instead of falling back to a random name.
  --json           Print {"address", "token", "jwt"} as JSON ("jwt" is the token
                   again, for scripts written for temp-inbox 0.x).
  --env            Print export lines for TEMP_INBOX_URL, TEMP_INBOX_ADDRESS,
                   TEMP_INBOX_TOKEN and TEMP_INBOX_JWT, for eval "$(temp-inbox new --env)".

${COMMON}
`,
  wait: `Usage: temp-inbox wait [--code | --link [TEXT]] [--from TEXT] [--to TEXT]
                       [--subject TEXT] [--timeout 30s] [--since ID | --any] [--json]

Waits for a mail to the inbox and prints it. By default only mail that arrives
after the command starts counts; --any takes mail already in the inbox too.

  --code           Print only the mail's verification code (waits for a mail that has one).
  --link [TEXT]    Print only the mail's best link: verification, sign-in and reset
                   links first, never unsubscribe, privacy, social or tracking links.
                   With TEXT (or --contains TEXT), only a link containing TEXT.
  --contains TEXT  The same as --link TEXT.
  --from TEXT      Only mail whose From: name or address contains TEXT (any case).
  --to TEXT        Only mail with a To: recipient whose name or address contains TEXT
                   (a sandbox's mail: any recipient of its envelope, Bcc ones too).
  --subject TEXT   Only mail whose subject contains TEXT (any case).
  --timeout TIME   Give up after TIME: 30s (the default), 500ms, 2m, 1.5h, 1d; a
                   bare number is seconds. Then exit 3.
  --since ID       Only mail with an id greater than ID (ids are in "list" and --json).
  --any            Any mail in the inbox, also mail that arrived before the command.
  --json           Print the whole parsed mail as JSON.

${COMMON}
`,
  list: `Usage: temp-inbox list [--limit N] [--json]

Lists the inbox's mail, newest first: one line per mail with its uuid, id, time,
sender and subject.

  --limit N        At most N mails (1..100, default 100).
  --json           Print {"count", "mails"} as JSON, each mail's metadata parsed.

${COMMON}
`,
  read: `Usage: temp-inbox read <uuid> [--text | --html | --raw | --json]

Prints one mail: its headers, codes, links and attachments, then its text.

  --text           Only the text (the HTML as text when it has no text part).
  --html           Only the HTML part (exit 1 when it has none).
  --raw            The message source as received.
  --json           The whole parsed mail as JSON.

${COMMON}
`,
  report: `Usage: temp-inbox report <uuid> [--links] [--json]

Prints the deliverability report of one mail: its spam score (when the service
has a scanner), HTML support across mail clients, links, content checks and the
Gmail and Yahoo sender rules. Exits 1 when any section fails, for CI.

  --links          Also fetch each link (never those that unsubscribe or confirm).
  --json           The whole report as JSON.

${COMMON}
`,
  delete: `Usage: temp-inbox delete

Deletes the inbox and all its mail; its token stops working. ("delete-address",
the command's name before 1.0, still works.)

${COMMON}
`,
};
HELP['sandbox'] = `Usage: temp-inbox sandbox login NAME [--password PASSWORD] [--json | --env]

Opens the sandbox NAME (an SMTP login: the mail its sessions sent, to any
recipient) and prints its address and token like "new"; then wait, list and read
work on it, and "wait --to alice@customer.com" waits for mail to that recipient.

  --password PASSWORD  The sandbox's password (default: $TEMP_INBOX_SANDBOX_PASSWORD).
  --json               Print {"address", "token", "jwt"} as JSON.
  --env                Print export lines, for eval "$(temp-inbox sandbox login NAME --env)".

${COMMON}
`;
HELP['mcp'] = MCP_HELP;
HELP['delete-address'] = HELP['delete']!;
HELP['help'] = HELP['main']!;

const COMMON_OPTIONS = {
  url: { type: 'string' },
  token: { type: 'string' },
  jwt: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options'];

const OPTIONS = {
  new: { name: { type: 'string' }, domain: { type: 'string' }, strict: { type: 'boolean' }, json: { type: 'boolean' }, env: { type: 'boolean' } },
  wait: {
    code: { type: 'boolean' },
    link: { type: 'boolean' },
    contains: { type: 'string' },
    from: { type: 'string' },
    to: { type: 'string' },
    subject: { type: 'string' },
    timeout: { type: 'string' },
    since: { type: 'string' },
    any: { type: 'boolean' },
    json: { type: 'boolean' },
  },
  list: { limit: { type: 'string' }, json: { type: 'boolean' } },
  sandbox: { password: { type: 'string' }, json: { type: 'boolean' }, env: { type: 'boolean' } },
  read: { text: { type: 'boolean' }, html: { type: 'boolean' }, raw: { type: 'boolean' }, json: { type: 'boolean' } },
  report: { links: { type: 'boolean' }, json: { type: 'boolean' } },
  delete: {},
  'delete-address': {},
  mcp: MCP_OPTIONS,
  help: {},
} as const satisfies Record<string, ParseArgsConfig['options']>;

type Command = keyof typeof OPTIONS;

/**
 * The command line with the options for every command that come before the command
 * (`temp-inbox --url URL list`) moved after it, where they are read with the command's own.
 */
function commandFirst(argv: string[]): string[] {
  const before: string[] = [];
  let i = 0;
  while (i < argv.length && argv[i]!.startsWith('--')) {
    const name = argv[i]!.slice(2).split('=')[0]!;
    const option = COMMON_OPTIONS[name as keyof typeof COMMON_OPTIONS];
    if (!option || option.type !== 'string') break;
    const step = argv[i]!.includes('=') ? 1 : 2;
    before.push(...argv.slice(i, i + step));
    i += step;
  }
  return i === 0 || i >= argv.length ? argv : [argv[i]!, ...before, ...argv.slice(i + 1)];
}

/** Runs one command line; resolves with the exit code. */
async function run(args: string[], io: Io): Promise<number> {
  const argv = commandFirst(args);
  const command = (argv[0] && !argv[0].startsWith('-') ? argv[0] : undefined) as string | undefined;
  try {
    if (command === undefined) {
      if (argv.includes('--help') || argv.includes('-h')) {
        io.out(HELP['main']!);
        return EXIT.ok;
      }
      if (argv.length === 0) {
        io.err(HELP['main']!);
        return EXIT.usage;
      }
      throw new UsageError(`"${argv[0]}" is not a command.`);
    }
    if (!(command in OPTIONS)) {
      const meant = nearest(command, Object.keys(OPTIONS));
      throw new UsageError(meant ? `"${command}" is not a command; did you mean "${meant}"?` : `"${command}" is not a command.`);
    }
    const cmd = command as Command;
    let parsed;
    try {
      parsed = parseArgs({ args: argv.slice(1), allowPositionals: true, strict: true, options: { ...COMMON_OPTIONS, ...OPTIONS[cmd] } });
    } catch (err) {
      const elsewhere = Object.fromEntries(Object.entries(OPTIONS).map(([name, options]) => [name, Object.keys(options)]));
      throw new UsageError(optionError(err as Error, Object.keys({ ...COMMON_OPTIONS, ...OPTIONS[cmd] }), elsewhere));
    }
    const values = parsed.values as Record<string, string | boolean | undefined>;
    const positionals = parsed.positionals;
    if (values['help'] || cmd === 'help') {
      const topic = cmd === 'help' ? (positionals[0] ?? 'main') : cmd;
      if (!HELP[topic]) throw new UsageError(`"${topic}" is not a command.`);
      io.out(HELP[topic]!);
      return EXIT.ok;
    }
    const str = (name: string) => values[name] as string | undefined;
    const flag = (name: string) => values[name] === true;
    const baseUrl = str('url') ?? io.env['TEMP_INBOX_URL'] ?? 'http://localhost:8080';
    const badUrl = urlProblem(baseUrl, str('url') !== undefined ? '--url' : 'TEMP_INBOX_URL');
    if (badUrl) throw new UsageError(badUrl);
    const client = new TempInboxClient({ baseUrl });
    const allowPositionals = (n: number, what: string) => {
      if (positionals.length > n) throw new UsageError(`"${cmd}" takes ${what}, not "${positionals.slice(n).join(' ')}".`);
    };

    const line = { cmd, client, io, positionals, str, flag, allowPositionals };
    if (cmd === 'new' || cmd === 'sandbox') return await openCommand(line);

    if (cmd === 'mcp') {
      allowPositionals(0, 'no arguments');
      const given = mcpCommand(str, io.env);
      if (typeof given === 'string') throw new UsageError(given);
      const { serveStdio } = await import('./mcp-server.js');
      return await serveStdio({ baseUrl: client.baseUrl, ...given, log: (line) => io.err(`temp-inbox mcp: ${line}\n`) });
    }

    const token = str('token') ?? str('jwt') ?? io.env['TEMP_INBOX_TOKEN'] ?? io.env['TEMP_INBOX_JWT'];
    if (!token) throw new UsageError(`"${cmd}" needs the inbox's token: pass --token, or set TEMP_INBOX_TOKEN (eval "$(temp-inbox new --env)" does).`);

    return await inboxCommand(line, token);
  } catch (err) {
    if (err instanceof UsageError) {
      const help = command && command in HELP && command !== 'help' ? `temp-inbox ${command} --help` : 'temp-inbox --help';
      io.err(`temp-inbox: ${err.message} Run "${help}" for usage.\n`);
      return EXIT.usage;
    }
    if (err instanceof WaitTimeoutError) {
      io.err(`temp-inbox: ${err.message}\n`);
      return EXIT.timeout;
    }
    if (err instanceof TempInboxError) {
      io.err(err.status === 0 ? `temp-inbox: ${err.message}\n` : `temp-inbox: The service refused (HTTP ${err.status}): ${err.message.replace(/\.?$/, '.')}\n`);
      return EXIT.error;
    }
    io.err(`temp-inbox: Something went wrong: ${err instanceof Error ? err.message : String(err)}\n`);
    return EXIT.error;
  }
}

const code = await run(process.argv.slice(2), {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  env: process.env,
});
// Let stdout drain before leaving (a pipe may still hold the output).
process.exitCode = code;
