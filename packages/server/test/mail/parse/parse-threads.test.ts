// PARSE_THREADS (docs/deploy.md, docs/security.md "Parsing"): the worker threads that parse
// incoming mail. The service starts that many parsing threads when the first SMTP client
// connects, none with itself (the spare for small mail only when it is needed), and parses
// mail with them. The parser's threads are told from the server's others by their young
// generation's size.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import type { Worker } from 'node:worker_threads';
import { SPARE_THREADS, YOUNG_GENERATION_MB } from '../../../src/mail/parse/parse-runner.js';
import { client, createAddress, message, sendMail, startTestServer } from '../../helpers/harness.js';

/** Resolves once the SMTP server at `port` greeted a client, which then leaves. */
function greeted(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('data', () => {
      socket.end('QUIT\r\n');
      resolve();
    });
    socket.once('error', reject);
  });
}

/** Parsing threads a service with `env` started: with itself, once an SMTP client connected, and by the time its first mail was stored. */
async function threadsStarted(env: Record<string, string>): Promise<{ atStart: number; afterConnect: number; afterMail: number }> {
  let parsers = 0;
  const started = (w: Worker) => {
    if (w.resourceLimits?.maxYoungGenerationSizeMb === YOUNG_GENERATION_MB) parsers++;
  };
  process.on('worker', started);
  const server = await startTestServer(env);
  try {
    const atStart = parsers;
    await greeted(server.smtpPort);
    const afterConnect = parsers;
    const { address } = await createAddress(server);
    await sendMail(server.smtpPort, { to: [address], message: message({ Subject: 'first' }, 'the first mail starts the parser') });
    return { atStart, afterConnect, afterMail: parsers };
  } finally {
    process.off('worker', started);
    await server.close();
  }
}

describe('PARSE_THREADS', { timeout: 120_000 }, () => {
  // Workers from the build: from source each worker also starts tsx's loader thread, when
  // it gets to it, so the ids used up would vary (workers/module-worker.ts).
  it('starts that many parsing threads when the first SMTP client connects, none with the service', async () => {
    for (const threads of [1, 3, 4]) {
      const seen = await threadsStarted({ PARSE_THREADS: String(threads) });
      const what = `PARSE_THREADS=${threads}: ${JSON.stringify(seen)}`;
      // The server's start costs no parsing thread (a thread's start is about 100 ms of CPU).
      assert.equal(seen.atStart, 0, what);
      assert.equal(seen.afterConnect, threads, what);
      // The first mail's tasks may come two at once, and the second take the spare.
      assert.ok(seen.afterMail >= threads && seen.afterMail <= threads + SPARE_THREADS, what);
    }
  });

  it('with several threads, mail arriving at once is parsed, each message whole', async () => {
    const server = await startTestServer({ PARSE_THREADS: '3' });
    try {
      const { address, jwt } = await createAddress(server);
      const subjects = Array.from({ length: 12 }, (_, i) => `parsed ${i}`);
      await Promise.all(subjects.map((s) => sendMail(server.smtpPort, { to: [address], message: message({ Subject: s }, `code ${100_000 + subjects.indexOf(s)}`) })));
      const list = (await client(server)('/api/mails?limit=20&offset=0', { jwt })).json as { results: { metadata: string }[] };
      const seen = list.results.map((m) => JSON.parse(m.metadata) as { subject: string; codes: string[] });
      assert.deepEqual(seen.map((m) => `${m.subject}: ${m.codes.join()}`).sort(), subjects.map((s, i) => `${s}: ${100_000 + i}`).sort());
    } finally {
      await server.close();
    }
  });
});
