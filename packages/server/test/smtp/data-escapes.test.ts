// The removal of escape dots in DATA (smtp/data-escapes.ts) against smtp-server's own
// (3.21.6): the same message bytes, byte count, size flag and commands after the message,
// for messages of every kind of dot line cut into chunks at every offset, byte by byte,
// and at random (fast-check). Then over real SMTP: a message of escape dots costs what any
// message of its size costs, not one turn of the event loop per line.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { SMTPStream } from 'smtp-server/lib/smtp-stream.js';
import { feedDataStream, originalFeed } from '../../src/smtp/data-escapes.js';
import { createAddress, openData, request, serversStoppedAfter } from '../helpers/harness.js';

type Feed = typeof feedDataStream;

interface Reading {
  data: string;
  byteLength: number;
  sizeExceeded: boolean;
  after: string[];
}

/** Feeds `chunks` to an SMTPStream in data mode that reads DATA with `feed`. */
async function read(feed: Feed, chunks: Buffer[], maxBytes?: number): Promise<Reading> {
  const stream = new SMTPStream() as unknown as SMTPStream & { _feedDataStream: Feed; oncommand(c: Buffer, cb?: () => void): void };
  stream._feedDataStream = feed;
  const after: string[] = [];
  stream.oncommand = (command, callback) => {
    after.push(command.toString('latin1'));
    callback?.();
  };
  const data = stream.startDataMode(maxBytes) as NodeJS.ReadableStream & { byteLength: number; sizeExceeded: boolean };
  const out: Buffer[] = [];
  data.on('data', (b: Buffer) => out.push(b));
  const ended = new Promise<void>((resolve) => data.on('end', () => resolve()));
  for (const c of chunks) stream.write(c);
  await ended;
  stream.continue();
  await new Promise<void>((resolve) => stream.end(resolve));
  return { data: Buffer.concat(out).toString('latin1'), byteLength: data.byteLength, sizeExceeded: data.sizeExceeded, after };
}

const split = (message: Buffer, cuts: number[]) => {
  const at = [0, ...[...new Set(cuts)].filter((c) => c > 0 && c < message.length).sort((a, b) => a - b), message.length];
  return at.slice(1).map((end, i) => message.subarray(at[i], end));
};

async function same(message: Buffer, cuts: number[], maxBytes?: number): Promise<Reading> {
  const chunks = split(message, cuts);
  const ours = await read(feedDataStream, chunks, maxBytes);
  assert.deepEqual(ours, await read(originalFeed as Feed, chunks, maxBytes), JSON.stringify({ message: message.toString('latin1'), cuts }));
  return ours;
}

const AWKWARD = Buffer.from(
  ['..first line escaped', '.y', '..', '...', '.x', 'x.', '', '..', '', 'a..b', '.\r', '. ', '..\r\n..', 'last'].join('\r\n') + '\r\n.\r\nNOOP\r\nQUIT\r\n',
  'latin1',
);

describe('escape dots removed in one pass', () => {
  it('reads as smtp-server does: a message of every kind of dot line, cut in two at every offset, and byte by byte', async () => {
    const whole = await same(AWKWARD, []);
    // A line of one dot ends the message, so none is in it; an unstuffed ".y" keeps its dot, as smtp-server keeps it.
    assert.equal(whole.data, ['.first line escaped', '.y', '.', '..', '.x', 'x.', '', '.', '', 'a..b', '.\r', '. ', '.\r\n.', 'last'].join('\r\n') + '\r\n');
    assert.deepEqual(whole.after, ['NOOP', 'QUIT']);
    for (let cut = 1; cut < AWKWARD.length; cut++) await same(AWKWARD, [cut]);
    await same(AWKWARD, Array.from({ length: AWKWARD.length }, (_, i) => i));
  });

  it('an empty message, one that is only escapes, and one past its size limit', async () => {
    assert.equal((await same(Buffer.from('.\r\nNOOP\r\n'), [])).data, '');
    const escapes = Buffer.from(`${'..\r\n'.repeat(1000)}.\r\n`);
    for (const cuts of [[], [1], [2], [3], [4], [5], [4001]]) assert.equal((await same(escapes, cuts)).data.length, 3000);
    const over = await same(escapes, [100, 2000], 1000);
    assert.equal(over.sizeExceeded, true);
    assert.equal(over.byteLength, 3000);
  });

  it('reads as smtp-server does: random lines of dots, random cuts (fast-check)', async () => {
    const line = fc.constantFrom('', '.', '..', '...', '.x', 'x', 'x.', '.\r', '\n', '..\n.', 'abc');
    await fc.assert(
      fc.asyncProperty(fc.array(line, { maxLength: 40 }), fc.array(fc.nat(400), { maxLength: 8 }), fc.boolean(), async (lines, cuts, limited) => {
        const message = Buffer.from(`${lines.join('\r\n')}\r\n.\r\nNOOP\r\n`, 'latin1');
        await same(message, cuts, limited ? 30 : undefined);
      }),
      { numRuns: 500 },
    );
  });
});

describe('a message of escape dots over SMTP', () => {
  const start = serversStoppedAfter();

  it('is stored whole, and answered as soon as a message of its size is', async () => {
    const server = await start();
    const { address, jwt } = await createAddress(server);
    // 4 MB: a million lines, each an escape dot and the dot it stands for.
    const lines = 1_000_000;
    const smtp = await openData(server.smtpPort, address);
    const t0 = performance.now();
    smtp.write(Buffer.from(`Subject: dots\r\n\r\n${'..\r\n'.repeat(lines)}.\r\n`));
    const answer = await smtp.reply(60_000);
    const ms = performance.now() - t0;
    await smtp.quit();
    assert.equal(answer.code, 250, answer.text);
    const list = await request(server.httpUrl, '/api/mails?limit=1&offset=0', { jwt });
    const mail = await request(server.httpUrl, `/api/mail/${list.json.results[0].uuid}`, { jwt });
    assert.ok((mail.json.raw as string).endsWith(`\r\n\r\n${'.\r\n'.repeat(lines)}`), 'each line is one dot');
    // The same size without escapes, on the same machine now: the bound follows the machine's load.
    const plain = await openData(server.smtpPort, address);
    const t1 = performance.now();
    plain.write(Buffer.from(`Subject: plain\r\n\r\n${'ab\r\n'.repeat(lines)}.\r\n`));
    assert.equal((await plain.reply(60_000)).code, 250);
    const baseline = performance.now() - t1;
    await plain.quit();
    // One turn of the event loop per escape took about 7.5 s of the server's thread for this message.
    assert.ok(ms < Math.max(3000, 3 * baseline), `answered after ${ms.toFixed(0)} ms (a message of its size without escapes: ${baseline.toFixed(0)} ms)`);
  });
});
