#!/usr/bin/env node
// temp-inbox command line: a disposable inbox from a shell script or CI job.
//
//   temp-inbox new [--name N] [--domain D] [--env]  prints {"address":…,"jwt":…}
//   temp-inbox wait [--timeout S] [--since ID] [--subject TEXT] [--code | --link [REGEX]]
//   temp-inbox list
//   temp-inbox read UUID
//   temp-inbox delete-address
//
// The service is --url, or TEMP_INBOX_URL, or http://localhost:8080; the inbox's token
// is --jwt or TEMP_INBOX_JWT. Exit codes: 0 done, 1 the service refused or no mail
// came in time, 2 a usage error.
import { parseArgs } from 'node:util';
import { TempInboxClient, TempInboxError, WaitTimeoutError } from './index.js';

const USAGE = `usage: temp-inbox <command> [options]

commands:
  new             create an inbox; prints {"address", "jwt"} as JSON, or with --env
                  export lines for TEMP_INBOX_ADDRESS and TEMP_INBOX_JWT (for eval)
                  --name N (falls back to a random name if N is taken or refused
                  unless --strict), --domain D
  wait            wait for the next mail (newer than --since, default 0) and print it
                  as JSON; --timeout S (default 30), --subject TEXT (only mail whose
                  subject contains TEXT), --code (print its verification code only),
                  --link [REGEX] (print its first link matching REGEX only)
  list            print the inbox's mail as JSON, newest first
  read UUID       print one mail with its raw message as JSON
  delete-address  delete the inbox and all its mail

options:
  --url URL       the service (default $TEMP_INBOX_URL or http://localhost:8080)
  --jwt TOKEN     the inbox's token (default $TEMP_INBOX_JWT); not for "new"
`;

function fail(code: number, message: string): never {
  process.stderr.write(`temp-inbox: ${message}\n`);
  process.exit(code);
}

async function main(): Promise<void> {
  let parsed;
  try {
    parsed = parseArgs({
      allowPositionals: true,
      options: {
        url: { type: 'string' },
        jwt: { type: 'string' },
        name: { type: 'string' },
        domain: { type: 'string' },
        strict: { type: 'boolean' },
        env: { type: 'boolean' },
        timeout: { type: 'string' },
        since: { type: 'string' },
        subject: { type: 'string' },
        code: { type: 'boolean' },
        link: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    fail(2, `${(err as Error).message}\n\n${USAGE}`);
  }
  const { values, positionals } = parsed;
  const [command, ...args] = positionals;
  if (values.help || !command) {
    process.stdout.write(USAGE);
    process.exit(command || values.help ? 0 : 2);
  }
  const client = new TempInboxClient({ baseUrl: values.url ?? process.env['TEMP_INBOX_URL'] ?? 'http://localhost:8080' });
  const out = (value: unknown): void => void process.stdout.write(`${typeof value === "string" ? value : JSON.stringify(value, null, 2)}\n`);
  const whole = (name: string, raw: string | undefined, fallback: number) => {
    if (raw === undefined) return fallback;
    if (!/^\d+$/.test(raw)) fail(2, `--${name} must be a whole number, got "${raw}"`);
    return Number(raw);
  };

  if (command === 'new') {
    const inbox = await client.createInbox({
      ...(values.name !== undefined ? { name: values.name } : {}),
      ...(values.domain !== undefined ? { domain: values.domain } : {}),
      fallbackToRandom: !values.strict,
    });
    // Both values are made of [A-Za-z0-9._@-] only; quoted all the same.
    if (values.env) return out(`export TEMP_INBOX_ADDRESS='${inbox.address}'\nexport TEMP_INBOX_JWT='${inbox.jwt}'`);
    return out({ address: inbox.address, jwt: inbox.jwt });
  }

  const jwt = values.jwt ?? process.env['TEMP_INBOX_JWT'];
  if (!jwt) fail(2, `"${command}" needs the inbox's token: --jwt or TEMP_INBOX_JWT`);
  const inbox = client.inbox('', jwt);
  switch (command) {
    case 'wait': {
      const subject = values.subject;
      // --link takes an optional pattern as the next positional.
      const pattern = values.link && args[0] !== undefined ? new RegExp(args[0]) : undefined;
      const opts = {
        timeoutMs: whole('timeout', values.timeout, 30) * 1000,
        since: whole('since', values.since, 0),
        ...(subject !== undefined ? { match: (m: { metadata: { subject: string } }) => m.metadata.subject.includes(subject) } : {}),
      };
      if (values.code) return out(await inbox.waitForCode(opts));
      if (values.link) return out(await inbox.waitForLink({ ...opts, ...(pattern ? { pattern } : {}) }));
      return out(await inbox.waitForMail(opts));
    }
    case 'list': {
      const { mails, count } = await inbox.list();
      return out({ count, mails });
    }
    case 'read':
      if (!args[0]) fail(2, '"read" needs the mail\'s uuid');
      return out(await inbox.read(args[0]));
    case 'delete-address':
      await inbox.destroy();
      return;
    default:
      fail(2, `unknown command "${command}"\n\n${USAGE}`);
  }
}

main().catch((err: unknown) => {
  if (err instanceof WaitTimeoutError) fail(1, err.message);
  if (err instanceof TempInboxError) fail(1, `the service answered ${err.status}: ${err.message}`);
  if (err instanceof SyntaxError) fail(2, err.message);
  fail(1, err instanceof Error ? `${err.message}${(err as { cause?: Error }).cause ? ` (${(err as { cause?: Error }).cause!.message})` : ''}` : String(err));
});
