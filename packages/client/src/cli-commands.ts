// The commands of `temp-inbox` that make or use an inbox: new and sandbox login (which
// print its address and token), then wait, list, read, report and delete, given its token.
import { formatReport, reportFailed } from './cli-report.js';
import type { TempInboxClient, Inbox, LinkWaitOptions } from './client.js';
import type { Message } from './message.js';
import { EXIT, type Io, timeoutOption, UsageError, wholeNumber } from './cli-usage.js';

/** One command line as run() parsed it. */
export interface CommandLine {
  cmd: string;
  client: TempInboxClient;
  io: Io;
  positionals: string[];
  str(name: string): string | undefined;
  flag(name: string): boolean;
  /** Refuses positionals past the first `n` (`what` says what the command takes). */
  allowPositionals(n: number, what: string): void;
}

const mailbox = (m: { name: string; address: string }) => (m.name ? `${m.name} <${m.address}>` : m.address);

/** The default view of one mail: a header block, then the text. */
function formatMessage(m: Message): string {
  const lines = [`From: ${mailbox(m.from)}`];
  if (m.to.length) lines.push(`To: ${m.to.map(mailbox).join(', ')}`);
  if (m.cc.length) lines.push(`Cc: ${m.cc.map(mailbox).join(', ')}`);
  lines.push(`Subject: ${m.subject}`, `Date: ${m.date ?? m.created_at}`, `Id: ${m.id} (uuid ${m.uuid})`);
  if (m.codes.length) lines.push(`Codes: ${m.codes.join(', ')}`);
  if (m.links.length) lines.push(`Links: ${m.links.join(' ')}`);
  for (const a of m.attachments) lines.push(`Attachment: ${a.filename || '(no name)'} (${a.content_type}, ${a.size} bytes, id ${a.id})`);
  return `${lines.join('\n')}\n\n${m.text.replace(/\s+$/, '')}\n`;
}

/** A handle that considers all of the inbox's mail (list, read and delete do not wait). */
function openAll(client: TempInboxClient, token: string): Promise<Inbox> {
  return client.openInbox(token, { since: 0 });
}

/** "new" and "sandbox login": the inbox's address and token, as text, JSON or shell exports. */
export async function openCommand({ cmd, client, io, positionals, str, flag, allowPositionals }: CommandLine): Promise<number> {
  if (flag('json') && flag('env')) throw new UsageError('Choose one of --json and --env.');
  let inbox;
  if (cmd === 'sandbox') {
    if (positionals[0] !== 'login' || positionals[1] === undefined) throw new UsageError('"sandbox" takes "login NAME".');
    allowPositionals(2, '"login NAME"');
    const password = str('password') ?? io.env['TEMP_INBOX_SANDBOX_PASSWORD'];
    if (password === undefined) throw new UsageError('"sandbox login" needs the password: pass --password, or set TEMP_INBOX_SANDBOX_PASSWORD.');
    inbox = await client.openSandbox({ name: positionals[1], password });
  } else {
    allowPositionals(0, 'no arguments');
    const name = str('name');
    const domain = str('domain');
    inbox = await client.createInbox({ ...(name !== undefined ? { name } : {}), ...(domain !== undefined ? { domain } : {}), fallbackToRandom: !flag('strict') });
  }
  if (flag('json')) io.out(`${JSON.stringify({ address: inbox.address, token: inbox.token, jwt: inbox.token }, null, 2)}\n`);
  else if (flag('env')) {
    // The values are made of [A-Za-z0-9._@:/-] only; single-quoted all the same.
    const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
    io.out(
      [`export TEMP_INBOX_URL=${quote(client.baseUrl)}`, `export TEMP_INBOX_ADDRESS=${quote(inbox.address)}`, `export TEMP_INBOX_TOKEN=${quote(inbox.token)}`, `export TEMP_INBOX_JWT=${quote(inbox.token)}`, ''].join('\n'),
    );
  } else {
    // The token in the link's fragment, which browsers never send to a server.
    const link = `${client.baseUrl.replace(/\/+$/, '')}/#token=${inbox.token}`;
    io.out(`${cmd === 'sandbox' ? 'Opened the sandbox' : 'Created the inbox'} ${inbox.address}.\nIts token (for --token or TEMP_INBOX_TOKEN) is ${inbox.token}\nOpen it in a browser: ${link}\n`);
  }
  return EXIT.ok;
  return EXIT.ok;
}

/** The commands that use an inbox by its token. */
export async function inboxCommand({ cmd, client, io, positionals, str, flag, allowPositionals }: CommandLine, token: string): Promise<number> {
  switch (cmd) {
    case 'wait': {
      const contains = str('contains') ?? (flag('link') ? positionals[0] : undefined);
      allowPositionals(flag('link') && str('contains') === undefined ? 1 : 0, flag('link') ? 'at most one TEXT after --link' : 'no arguments (filters are options: --from, --to, --subject)');
      if (flag('code') && (flag('link') || str('contains') !== undefined)) throw new UsageError('Choose one of --code and --link.');
      if (flag('any') && str('since') !== undefined) throw new UsageError('Choose one of --since and --any.');
      const timeout = str('timeout') === undefined ? 30_000 : timeoutOption(str('timeout')!);
      const since = flag('any') ? 0 : str('since') !== undefined ? wholeNumber('since', str('since')!, 0) : undefined;
      const inbox = await client.openInbox(token, since === undefined ? {} : { since });
      const opts: LinkWaitOptions = { timeout };
      for (const key of ['from', 'to', 'subject'] as const) if (str(key) !== undefined) opts[key] = str(key)!;
      if (flag('code')) io.out(`${await inbox.waitForCode(opts)}\n`);
      else if (flag('link') || contains !== undefined) io.out(`${await inbox.waitForLink({ ...opts, ...(contains !== undefined ? { contains } : {}) })}\n`);
      else {
        const message = await inbox.waitForMail(opts);
        io.out(flag('json') ? `${JSON.stringify(message, null, 2)}\n` : formatMessage(message));
      }
      return EXIT.ok;
    }
    case 'list': {
      allowPositionals(0, 'no arguments');
      const limit = str('limit') === undefined ? 100 : wholeNumber('limit', str('limit')!, 1, 100);
      const inbox = await openAll(client, token);
      const { mails, count } = await inbox.list({ limit });
      if (flag('json')) io.out(`${JSON.stringify({ count, mails }, null, 2)}\n`);
      else if (count === 0) io.out(`The inbox ${inbox.address} has no mail.\n`);
      else {
        for (const m of mails) io.out(`${m.uuid}  ${String(m.id).padStart(4)}  ${m.created_at}  ${m.metadata.from.address || m.source}  ${m.metadata.subject}\n`);
        if (count > mails.length) io.out(`(${mails.length} of ${count} mails shown.)\n`);
      }
      return EXIT.ok;
    }
    case 'read': {
      if (positionals.length === 0) throw new UsageError('"read" needs the uuid of a mail (see "temp-inbox list").');
      allowPositionals(1, "one mail's uuid");
      const views = ['text', 'html', 'raw', 'json'].filter(flag);
      if (views.length > 1) throw new UsageError(`Choose one of --text, --html, --raw and --json, not ${views.map((v) => `--${v}`).join(' and ')}.`);
      const inbox = await openAll(client, token);
      const uuid = positionals[0]!;
      if (flag('raw')) {
        io.out(await inbox.raw(uuid));
        return EXIT.ok;
      }
      const message = await inbox.read(uuid);
      if (flag('json')) io.out(`${JSON.stringify(message, null, 2)}\n`);
      else if (flag('text')) io.out(message.text.endsWith('\n') ? message.text : `${message.text}\n`);
      else if (flag('html')) {
        if (message.html === null) {
          io.err('temp-inbox: This mail has no HTML part; --text shows its text.\n');
          return EXIT.error;
        }
        io.out(message.html.endsWith('\n') ? message.html : `${message.html}\n`);
      } else io.out(formatMessage(message));
      return EXIT.ok;
    }
    case 'report': {
      if (positionals.length === 0) throw new UsageError('"report" needs the uuid of a mail (see "temp-inbox list").');
      allowPositionals(1, "one mail's uuid");
      const report = await (await openAll(client, token)).report(positionals[0]!, { checkLinks: flag('links') });
      io.out(flag('json') ? `${JSON.stringify(report, null, 2)}\n` : formatReport(report));
      return reportFailed(report) ? EXIT.error : EXIT.ok;
    }
    case 'delete':
    case 'delete-address': {
      allowPositionals(0, 'no arguments');
      const inbox = await openAll(client, token);
      await inbox.delete();
      io.out(`Deleted the inbox ${inbox.address} and all its mail.\n`);
      return EXIT.ok;
    }
    default:
      throw new UsageError(`"${cmd}" is not a command.`);
  }
}
