// The hostile senders of the parse attack (hostile-parse-attack.ts), in a process of their
// own so that pushing megabytes over twenty connections does not delay the bench's own
// clock for ordinary mail. Each client of `clients` sends mails built to be slow to parse,
// in turn and in a loop, over `connections` connections, until SIGTERM; then it prints
// RESULT and the replies counted per kind of mail, and exits.
//
//   node --import tsx hostile-senders.ts '{"port":2525,"to":"a@b","clients":["127.0.0.2"],"connections":10}'
import { setTimeout as sleep } from 'node:timers/promises';
// Not lib/procs.js: its SIGTERM handler would end this process before it prints its counts.
import { SmtpConnection } from '../lib/smtp-client.js';

/** The server's default MAX_MESSAGE_BYTES; every hostile mail must fit under it to be parsed at all. */
const MAX_MESSAGE_BYTES = 10 * 1024 * 1024;

// Hostile mails. Boundaries are fixed-width so that none is a prefix of another.
const header = (subject: string, to: string) => [`From: <attacker@example.net>`, `To: <${to}>`, `Subject: ${subject}`, 'MIME-Version: 1.0'];

function manyParts(parts: number, to: string): Buffer {
  const out = [...header(`${parts} parts`, to), 'Content-Type: multipart/mixed; boundary="bnd"', ''];
  for (let i = 0; i < parts; i++) out.push('--bnd', `Content-Type: application/octet-stream; name="p${i}.bin"`, '', 'x');
  out.push('--bnd--', '');
  return Buffer.from(out.join('\r\n'));
}

/** Empty parts in under 64 KiB: small mail by its size, yet tens of milliseconds of parsing. */
function emptyParts(parts: number, to: string): Buffer {
  const out = [...header(`${parts} empty parts`, to), 'Content-Type: multipart/mixed; boundary="bnd"', ''];
  for (let i = 0; i < parts; i++) out.push('--bnd', '', 'x');
  out.push('--bnd--', '');
  return Buffer.from(out.join('\r\n'));
}

function deepNesting(depth: number, to: string): Buffer {
  const b = (i: number) => `n${String(i).padStart(5, '0')}`;
  const out = [...header(`${depth} deep`, to), `Content-Type: multipart/mixed; boundary="${b(0)}"`, ''];
  for (let i = 1; i < depth; i++) out.push(`--${b(i - 1)}`, `Content-Type: multipart/mixed; boundary="${b(i)}"`, '');
  out.push(`--${b(depth - 1)}`, 'Content-Type: text/plain', '', 'bottom');
  for (let i = depth - 1; i >= 0; i--) out.push(`--${b(i)}--`);
  out.push('');
  return Buffer.from(out.join('\r\n'));
}

function manyHeaders(count: number, to: string): Buffer {
  const out = header(`${count} header lines`, to);
  for (let i = 0; i < count; i++) out.push(`X-H${i}: v`);
  out.push('', 'body', '');
  return Buffer.from(out.join('\r\n'));
}

function hostileMails(to: string): { kind: string; bytes: Buffer }[] {
  const mails = [
    { kind: '40,000 parts', bytes: manyParts(40_000, to) },
    { kind: '3,000-deep nesting', bytes: deepNesting(3_000, to) },
    { kind: '60,000 header lines', bytes: manyHeaders(60_000, to) },
    { kind: '4,500 empty parts (60 KB)', bytes: emptyParts(4_500, to) },
  ];
  for (const m of mails) {
    if (m.bytes.length >= MAX_MESSAGE_BYTES) throw new Error(`hostile mail "${m.kind}" is ${m.bytes.length} bytes, over the server's limit`);
    // SmtpConnection.send does no dot-stuffing.
    if (/(^|\r\n)\./.test(m.bytes.toString('latin1'))) throw new Error(`hostile mail "${m.kind}" has a line starting with "."`);
  }
  return mails;
}

/** "closed" for a dropped connection, else the first refusing reply code in an SmtpConnection error. */
function refusal(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return /\b([45]\d\d)\b/.exec(message)?.[1] ?? 'closed';
}

export interface AttackStats {
  /** Final replies (or "closed") per kind of hostile mail. */
  replies: Record<string, Record<string, number>>;
  accepted: number;
  refused: number;
}

/** Each client of `clients` sends the hostile mails in turn, in a loop over `connections` connections, until stopped. */
function attack(smtpPort: number, to: string, clients: string[], connections: number) {
  const mails = hostileMails(to);
  const replies: Record<string, Record<string, number>> = Object.fromEntries(mails.map((m) => [m.kind, {}]));
  const count = (kind: string, reply: string) => (replies[kind]![reply] = (replies[kind]![reply] ?? 0) + 1);
  let running = true;
  const open = new Set<SmtpConnection>();
  const senders = clients.flatMap((ip) => Array.from({ length: connections }, (_, c) => ({ ip, c })));
  const workers = senders.map(async ({ ip, c }) => {
    let conn: SmtpConnection | undefined;
    for (let i = c; running; i++) {
      const mail = mails[i % mails.length]!;
      try {
        if (!conn) {
          conn = await SmtpConnection.open(smtpPort, '127.0.0.1', ip);
          open.add(conn);
        }
        await conn.send('attacker@example.net', to, mail.bytes);
        count(mail.kind, '250');
      } catch (err) {
        if (!running) break;
        count(mail.kind, refusal(err));
        conn?.destroy();
        if (conn) open.delete(conn);
        conn = undefined;
        // A refusing server is not hammered with reconnects.
        await sleep(100);
      }
    }
    conn?.destroy();
  });
  return {
    async stop(): Promise<AttackStats> {
      running = false;
      // The phase is over: mails still being sent or parsed are abandoned.
      for (const c of open) c.destroy();
      await Promise.all(workers);
      const all = Object.values(replies).flatMap((r) => Object.entries(r));
      const accepted = all.filter(([k]) => k === '250').reduce((a, [, v]) => a + v, 0);
      const refused = all.filter(([k]) => k !== '250').reduce((a, [, v]) => a + v, 0);
      return { replies, accepted, refused };
    },
  };
}

const { port, to, clients, connections } = JSON.parse(process.argv[2] ?? '{}') as { port: number; to: string; clients: string[]; connections: number };
const senders = attack(port, to, clients, connections);
process.stdout.write(`SENDING ${hostileMails(to).map((m) => `${m.kind} ${(m.bytes.length / 1e6).toFixed(2)} MB`).join(', ')}\n`);
process.once('SIGTERM', () => {
  void senders.stop().then((stats) => {
    process.stdout.write(`RESULT ${JSON.stringify(stats)}\n`);
    process.exit(0);
  });
});
