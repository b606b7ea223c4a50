// A sandbox login's hash waits its network's turn in the password queue (domain/passwords.ts):
// many guesses at once from one network get a retryable 429 past MAX_QUEUED_PER_NETWORK
// instead of filling the queue that every other login (other networks', mail.tm's) waits in,
// and a guess refused there is not counted towards the lock-out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppError } from '../../src/domain/errors.js';
import { MAX_QUEUED_PER_NETWORK } from '../../src/domain/passwords.js';
import { createFailureLock } from '../../src/limits/failure-lock.js';
import { prepareDecoy } from '../../src/domain/passwords.js';
import { createSandboxService } from '../../src/sandboxes/service.js';
import { openSqliteStore } from '../../src/storage/sqlite/sqlite-store.js';

test('wrong sandbox passwords at once from one network: past its share of the queue, 429, and uncounted', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-queue-'));
  const store = openSqliteStore(join(dir, 'x.sqlite'));
  try {
    const unused = () => Promise.reject(new Error('not used by login'));
    const locks = { client: createFailureLock('c', { max: 100, windowSeconds: 900 }, undefined, 't:'), login: createFailureLock('l', { max: 100, windowSeconds: 900 }, undefined, 't:') };
    const sandboxes = createSandboxService({
      store,
      mail: { deliver: unused, deleteAddress: unused, tokenFor: unused },
      defaults: { maxMails: 0, maxBytes: 0, retentionMs: 60_000 },
      locks,
      maxMessageBytes: 1024,
      hostname: 'test.invalid',
    });
    await sandboxes.put({ name: 'qa', password: 'right' });
    const total = 12;
    // Started in one tick: each reaches the queue before any hash (the thread pool's) ends.
    // The service starts building the decoy hash; it holds a place in the queue until it is done.
    await prepareDecoy();
    const results = await Promise.allSettled(Array.from({ length: total }, (_, i) => sandboxes.login('qa', 'wrong', `198.51.100.${i + 1}`)));
    const refused = results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason as unknown);
    // Two hash at once (passwords.ts MAX_CONCURRENT), MAX_QUEUED_PER_NETWORK wait; the rest are refused.
    assert.equal(refused.length, total - 2 - MAX_QUEUED_PER_NETWORK, 'one network cannot queue more than its share');
    for (const err of refused) assert.ok(err instanceof AppError && err.code === 'rate_limited', String(err));
    for (const r of results) if (r.status === 'fulfilled') assert.deepEqual(r.value, { ok: false, reason: 'wrong' });
    // Only the checked guesses count: 100 - 6 attempts are left for the name, so 94 more fail before it locks.
    let lockedAfter = 0;
    while ((await locks.login.attempt('qa')) === 0) lockedAfter++;
    assert.equal(lockedAfter, 100 - (2 + MAX_QUEUED_PER_NETWORK));
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
