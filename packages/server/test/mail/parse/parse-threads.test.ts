// PARSE_THREADS (docs/deploy.md, docs/security.md "Parsing"): the worker threads that parse
// incoming mail. The service starts that many parsing threads with itself (the spare for small
// mail only when it is needed), and parses mail with them. Threads are counted by the ids
// Node gives them: each new thread of the process takes the next one, so the ids a start-up
// used up are the threads it started.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { client, createAddress, message, sendMail, startTestServer } from '../../helpers/harness.js';

/** The id the next thread of this process gets (a thread started and ended to see it). */
async function nextThreadId(): Promise<number> {
  const probe = new Worker('', { eval: true });
  const id = probe.threadId;
  await probe.terminate();
  return id;
}

/** Threads a start-up of the service with `env` started (those it still has or had), besides the probes. */
async function threadsStarted(env: Record<string, string>): Promise<number> {
  const before = await nextThreadId();
  const server = await startTestServer(env);
  try {
    return (await nextThreadId()) - before - 1;
  } finally {
    await server.close();
  }
}

describe('PARSE_THREADS', { timeout: 120_000 }, () => {
  // Workers from the build: from source each worker also starts tsx's loader thread, when
  // it gets to it, so the ids used up would vary (workers/module-worker.ts).
  it('starts that many parsing threads with the service: 3 start two more than 1, 4 three more', async (t) => {
    if (!existsSync(new URL('../../../dist/mail/parse/parse-worker.js', import.meta.url))) return t.skip('needs the build (npm run build)');
    const saved = process.env['TEMP_INBOX_WORKERS'];
    process.env['TEMP_INBOX_WORKERS'] = 'dist';
    try {
      const one = await threadsStarted({ PARSE_THREADS: '1' });
      const three = await threadsStarted({ PARSE_THREADS: '3' });
      const four = await threadsStarted({ PARSE_THREADS: '4' });
      assert.deepEqual([three - one, four - one], [2, 3], `threads started: ${one} with 1, ${three} with 3, ${four} with 4`);
    } finally {
      if (saved === undefined) delete process.env['TEMP_INBOX_WORKERS'];
      else process.env['TEMP_INBOX_WORKERS'] = saved;
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
