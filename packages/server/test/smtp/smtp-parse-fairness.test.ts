// Ordinary mail beside a hostile sender, over real SMTP sessions (docs/decisions.md
// "Parsing"): while one client's slow-to-parse mails wait for the one parser thread,
// another client's small mail is answered 250 with them still unanswered. The claim is an
// order of replies, never a time.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { client, createAddress, openData, SmtpClient, serversStoppedAfter } from '../helpers/harness.js';

const start = serversStoppedAfter();

/** 20,000 empty parts (about 240 KB): hundreds of milliseconds of parsing each. */
function slowMail(n: number, to: string): string {
  const out = [`To: <${to}>`, `Subject: slow ${n}`, 'Content-Type: multipart/mixed; boundary="bnd"', ''];
  for (let i = 0; i < 20_000; i++) out.push('--bnd', '', 'x');
  out.push('--bnd--', '');
  return out.join('\r\n');
}

/** Sends `message` (no line starting with ".") and waits for its final reply, however long the parser takes. */
async function finish(smtp: SmtpClient, message: string): Promise<number> {
  smtp.write(`${message}.\r\n`);
  return (await smtp.reply(120_000)).code;
}

describe('SMTP: the parser is shared fairly between clients', { timeout: 240_000 }, () => {
  it("with one parser thread, another client's small mail gets its 250 while a hostile client's slow mails are still being parsed", async () => {
    // No budget runs out, however loaded the machine: each slow mail is parsed whole.
    const server = await start({ PARSE_THREADS: '1', PARSE_TIMEOUT: '120s' });
    const { address, jwt } = await createAddress(server);
    const answered: string[] = [];
    const hostile = await Promise.all([1, 2, 3, 4].map(() => openData(server.smtpPort, address, undefined, '127.0.0.2')));
    const ordinary = await openData(server.smtpPort, address, undefined, '127.0.0.3');
    let firstHostile!: () => void;
    const oneHostileAnswered = new Promise<void>((resolve) => (firstHostile = resolve));
    const slow = hostile.map(async (smtp, i) => {
      assert.equal(await finish(smtp, slowMail(i + 1, address)), 250);
      answered.push(`hostile ${i + 1}`);
      firstHostile();
    });
    // Once a slow mail is answered the parser works through the others: one running, two waiting.
    await oneHostileAnswered;
    const small = (async () => {
      assert.equal(await finish(ordinary, `To: <${address}>\r\nSubject: ordinary\r\n\r\nYour code is 482913\r\n`), 250);
      answered.push('ordinary');
    })();
    await Promise.all([...slow, small]);
    const before = answered.indexOf('ordinary');
    assert.ok(answered.length - 1 - before >= 2, `the ordinary 250 came with at least two slow mails still unanswered: ${answered.join(', ')}`);
    // Every mail was stored whole (none degraded by a budget).
    const list = (await client(server)('/api/mails?limit=10&offset=0', { jwt })).json as { results: { metadata: string }[] };
    assert.deepEqual(list.results.map((m) => (JSON.parse(m.metadata) as { subject: string }).subject).sort(), ['ordinary', 'slow 1', 'slow 2', 'slow 3', 'slow 4']);
    for (const s of [...hostile, ordinary]) await s.quit();
  });
});
