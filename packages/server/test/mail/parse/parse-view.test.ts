// The parser's views (mail/parse/parse.ts view): a view waiting for a thread holds no message
// (it is read once the parse has its thread), a view whose message cannot be read
// rejects with that error and gives its thread back, and waiting clients take turns.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createMessageParser, type MessageParser } from '../../../src/mail/parse/parse.js';

const BUDGET_MS = 1000;
const crlf = (lines: string[]) => lines.join('\r\n');
/** Far more than one budget of parsing. */
const SLOW = Buffer.from(crlf(['Subject: slow', 'Content-Type: multipart/mixed; boundary="b"', '', ...Array.from({ length: 300_000 }, () => '--b\r\n\r\nx'), '--b--', '']));
const QUICK = Buffer.from(crlf(['Subject: quick', '', 'hello', '']));

describe('parser views', { timeout: 120_000 }, () => {
  let parser: MessageParser;
  before(() => {
    parser = createMessageParser({ threads: 1, timeoutMs: BUDGET_MS });
  });
  after(() => parser.close());

  it('a view waiting behind a slow one reads its message only when it gets the thread, a budget later', async () => {
    const loaded: Record<string, number> = {};
    const load = (name: string, raw: Buffer) => async () => {
      loaded[name] = performance.now();
      return raw;
    };
    const slow = parser.view(load('slow', SLOW), 0, 'a');
    // The slow view has its thread once its message is read.
    while (loaded['slow'] === undefined) await new Promise((r) => setTimeout(r, 5));
    const quick = parser.view(load('quick', QUICK), 0, 'b');
    const [s, q] = await Promise.all([slow, quick]);
    assert.equal(s?.degraded, true);
    assert.equal(q?.degraded, false);
    assert.equal(JSON.parse(q!.json.toString()).subject, 'quick');
    // Read after the slow parse was stopped at its budget, not when it was asked for.
    const waited = loaded['quick']! - loaded['slow']!;
    assert.ok(waited >= BUDGET_MS * 0.95, `the waiting view's message was read ${Math.round(waited)} ms after the running one's`);
  });

  it("a message that cannot be read rejects the view with its error, and the thread goes on to the next", async () => {
    const gone = parser.view(async () => {
      throw new Error('no such mail');
    }, 0, 'a');
    await assert.rejects(gone, /no such mail/);
    const next = await parser.view(async () => QUICK, 0, 'a');
    assert.equal(next?.degraded, false);
  });

  it('counts the views given to a thread', async () => {
    const before = parser.viewParses();
    await parser.view(async () => QUICK, 0);
    assert.equal(parser.viewParses(), before + 1);
  });
});
