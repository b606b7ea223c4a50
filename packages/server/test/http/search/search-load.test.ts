// Costly searches never hold the server: over a 1,000-mail inbox whose words share a
// few starts, eight-term searches (one-letter words, and three-letter prefixes that
// each start an eighth of the inbox's words) run back to back while /health_check is
// polled and another client holds an SMTP session. On the serving thread each of them
// took about 0.6 s of the event loop; the search thread (storage/sqlite/search-thread.ts)
// and the whole-word rule for short words leave the loop free.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { rmSync } from 'node:fs';
import { createAddress, message, request, SmtpClient, startTestServer, tmp } from '../../helpers/harness.js';
import { newMail } from '../../helpers/store-contract.js';
import { openSqliteStore } from '../../../src/storage/sqlite/sqlite-store.js';
import { SQLITE_FILE } from '../../../src/storage/index.js';

/** The bound on /health_check's 99th percentile while the searches run (each took ~600 ms of the loop before). */
const HEALTH_P99_MS = 250;
const MAILS = 1000;
/** Searches run back to back, the two kinds in turn. */
const SEARCHES = 12;
const WORDS_PER_MAIL = 1500;
const STARTS = ['abc', 'bcd', 'cde', 'def', 'efg', 'fgh', 'ghi', 'hij'];

/** Words that each start with one of STARTS, so a three-letter prefix matches an eighth of the inbox's words. */
function searchTextOf(mail: number): string {
  const words: string[] = [];
  for (let i = 0; i < WORDS_PER_MAIL; i++) {
    const n = (mail * 7919 + i * 104_729) % 200_000;
    words.push(STARTS[n % STARTS.length]! + n.toString(36));
  }
  return words.join(' ');
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
};

describe('search under load', { timeout: 300_000 }, () => {
  it(`keeps /health_check's p99 under ${HEALTH_P99_MS} ms and another client's SMTP session answered while costly searches run back to back; over 8 terms is a 400`, async () => {
    const dir = tmp('temp-inbox-search-load-');
    const server = await startTestServer({}, dir);
    try {
      const { address, jwt } = await createAddress(server, { name: 'big-inbox' });
      const other = await createAddress(server, { name: 'other-inbox' });
      // The inbox is filled through a second connection to the server's own file (1,000
      // SMTP deliveries would take minutes on a loaded machine and test nothing more here).
      const seeding = openSqliteStore(join(dir, SQLITE_FILE));
      const owner = await seeding.findAddress(address);
      assert.ok(owner);
      for (let c = 0; c < MAILS; c += 50) {
        await seeding.insertMails(Array.from({ length: 50 }, (_, i) => newMail(owner, Date.now() + c + i, { searchText: searchTextOf(c + i) })));
      }
      await seeding.searchMails(owner.id, 'abc', 1, 0); // indexes what is still queued
      await seeding.close();

      const search = (q: string) => request(server.httpUrl, `/api/mails/search?q=${encodeURIComponent(q)}&limit=10&offset=0`, { jwt });
      const over = await search('a b c d e f g h i');
      assert.equal(over.status, 400);
      assert.match(over.headers.get('content-type') ?? '', /^text\/plain/);
      assert.match(over.text, /9 terms; at most 8 are allowed/);
      const oneLetter = await search('a b c d e f g h');
      assert.equal(oneLetter.status, 200, oneLetter.text);
      assert.equal(oneLetter.json.count, 0, 'one-letter words are matched whole');
      const prefix = await search(STARTS[0]!);
      assert.equal(prefix.status, 200, prefix.text);
      assert.equal(prefix.json.count, MAILS, 'a three-letter word is matched as a prefix');

      let searching = true;
      const statuses: number[] = [];
      const searches = (async () => {
        for (let i = 0; i < SEARCHES; i++) statuses.push((await search(i % 2 === 0 ? 'a b c d e f g h' : STARTS.join(' '))).status);
      })().finally(() => (searching = false));

      const latencies: number[] = [];
      const polling = (async () => {
        while (searching) {
          const t = performance.now();
          const r = await request(server.httpUrl, '/health_check');
          latencies.push(performance.now() - t);
          assert.equal(r.status, 200);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      })();

      // Another client's session: each reply within 5 s (it waited past 60 s before).
      const smtpReplies: number[] = [];
      const session = (async () => {
        const smtp = await SmtpClient.connect(server.smtpPort);
        const step = async (line: string, code: number, data?: string) => {
          const t = performance.now();
          const r = data === undefined ? await smtp.command(line) : await smtp.data(data);
          smtpReplies.push(performance.now() - t);
          assert.equal(r.code, code, `${line} -> ${r.text}`);
        };
        try {
          await step('EHLO other.test', 250);
          await step('MAIL FROM:<other@example.org>', 250);
          await step(`RCPT TO:<${other.address}>`, 250);
          await step('DATA', 354);
          await step('(message)', 250, message({ Subject: 'During the searches' }, 'Delivered while the inbox was searched.'));
          while (searching) {
            await step('NOOP', 250);
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
        } finally {
          await smtp.quit();
        }
      })();

      await Promise.all([searches, polling, session]);
      // The prefix searches cost the search thread about 0.6 s each; on a loaded machine one
      // may run past its 2 s budget and be stopped (503), which is the budget at work.
      assert.equal(statuses.length, SEARCHES);
      assert.ok(
        statuses.every((s, i) => s === 200 || (i % 2 === 1 && s === 503)),
        `the one-letter searches answered 200, the prefix ones 200 or 503: ${statuses.join(' ')}`,
      );
      assert.ok(latencies.length >= 20, `health_check was polled ${latencies.length} times`);
      const p99 = percentile(latencies, 99);
      console.log(`health_check p50 ${percentile(latencies, 50).toFixed(0)} ms, p99 ${p99.toFixed(0)} ms over ${latencies.length} polls; searches ${statuses.join(' ')}`);
      assert.ok(p99 < HEALTH_P99_MS, `health_check p99 ${p99.toFixed(0)} ms (p50 ${percentile(latencies, 50).toFixed(0)} ms) over ${latencies.length} polls`);
      assert.ok(smtpReplies.length >= 5, 'the SMTP session was answered');
      const listed = await request(server.httpUrl, `/api/mails/search?q=${encodeURIComponent('subject:during')}&limit=10&offset=0`, { jwt: other.jwt });
      assert.equal(listed.json.count, 1, 'the mail delivered during the searches is stored');
    } finally {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
