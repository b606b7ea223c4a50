// Fair scheduling of the parser (mail/parse/parse-lanes.ts) with real worker threads and
// real parses: a client with many slow messages queued delays another client's parse by
// at most the one it has running, and holds at most its share of the threads. Every
// claim is an order of completion, never a time.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createMessageParser, type MessageParser } from '../../../src/mail/parse/parse.js';

/** 20,000 empty parts (about 240 KB): hundreds of milliseconds of parsing, in the large lane. */
function slowMail(n: number): Buffer {
  const out = [`Subject: slow ${n}`, 'Content-Type: multipart/mixed; boundary="bnd"', ''];
  for (let i = 0; i < 20_000; i++) out.push('--bnd', '', 'x');
  out.push('--bnd--', '');
  return Buffer.from(out.join('\r\n'));
}

/** Over 64 KiB of plain text: a large message by its size, yet parsed in a few milliseconds. */
function quickLargeMail(): Buffer {
  return Buffer.from(['Subject: quick large', 'Content-Type: text/plain', '', 'y'.repeat(100 * 1024), ''].join('\r\n'));
}

function smallMail(): Buffer {
  return Buffer.from(['Subject: small', 'Content-Type: text/plain', '', 'Your code is 482913', ''].join('\r\n'));
}

/** Parses `raw` for `client`, noting `name` in `done` when the parse has answered (whole, not degraded). */
async function parseNoting(parser: MessageParser, done: string[], name: string, raw: Buffer, client: string): Promise<void> {
  const parsed = await parser.parse(raw, client);
  assert.equal(parsed.degraded, false, `${name} parsed whole`);
  done.push(name);
}

describe('parser fairness (real threads, real parses)', { timeout: 180_000 }, () => {
  const parsers: MessageParser[] = [];
  // No budget runs out here, however loaded the machine: a degraded parse would be another test.
  const start = (threads: number) => {
    const p = createMessageParser({ threads, timeoutMs: 120_000, maxWaitMs: 120_000 });
    parsers.push(p);
    return p;
  };
  after(async () => {
    for (const p of parsers) await p.close();
  });

  it("one thread: another client's small mail is parsed before the second of four slow mails queued before it", async () => {
    const parser = start(1);
    const done: string[] = [];
    const slow = [1, 2, 3, 4].map((n) => parseNoting(parser, done, `a${n}`, slowMail(n), '192.0.2.1'));
    const small = parseNoting(parser, done, 'b', smallMail(), '192.0.2.2');
    await Promise.all([...slow, small]);
    assert.ok(done.indexOf('b') < done.indexOf('a2'), `b waited for at most a's running parse: ${done.join(' ')}`);
    assert.deepEqual(done.filter((n) => n.startsWith('a')), ['a1', 'a2', 'a3', 'a4'], "a's own mail in order");
  });

  it("two threads: a client with three slow mails holds one thread, so another client's large mail takes the other at once", async () => {
    const parser = start(2);
    const done: string[] = [];
    const slow = [1, 2, 3].map((n) => parseNoting(parser, done, `a${n}`, slowMail(n), '192.0.2.1'));
    const other = parseNoting(parser, done, 'c', quickLargeMail(), '192.0.2.3');
    await Promise.all([...slow, other]);
    // a2 is given a thread only once a1 is done, so c goes before it (on the second thread, or
    // after a1 on the first while the second is still starting). Had a taken both threads, c
    // would have waited for one of a1 and a2, parsed side by side, and ended after both.
    assert.ok(done.indexOf('c') < done.indexOf('a2'), `completion order: ${done.join(' ')}`);
    assert.deepEqual(done.filter((n) => n.startsWith('a')), ['a1', 'a2', 'a3'], "a's own mail in order");
  });
});
