// The one-shot workers (workers/one-shot.ts) that read large Mailpit send bodies and reshape
// large messages: at most MAX_ONE_SHOTS at once in the process and MAX_ONE_SHOTS_WAITING
// queued; past both a job is refused with a retryable 503 instead of starting a thread of
// its own (one per open HTTP connection had no bound).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AppError } from '../../src/domain/errors.js';
import { composeSend, INLINE_BYTES } from '../../src/mailpit/send-job.js';
import { MAX_ONE_SHOTS, MAX_ONE_SHOTS_WAITING, oneShotsRunning } from '../../src/workers/one-shot.js';

test('large send bodies at once: at most MAX_ONE_SHOTS workers, MAX_ONE_SHOTS_WAITING queued, the rest 503', async () => {
  const body = Buffer.from(JSON.stringify({ From: { Email: 'a@example.com' }, To: [{ Email: 'b@example.com' }], Subject: 'large', Text: 'x'.repeat(INLINE_BYTES + 1000) }));
  assert.ok(body.length > INLINE_BYTES, 'read in a worker');
  const extra = 5;
  const total = MAX_ONE_SHOTS + MAX_ONE_SHOTS_WAITING + extra;
  let most = 0;
  const sample = setInterval(() => (most = Math.max(most, oneShotsRunning())), 1);
  const jobs = Array.from({ length: total }, () => composeSend({ maxBytes: 1024 * 1024, now: Date.now(), hostname: 'test.invalid' }, body));
  most = Math.max(most, oneShotsRunning());
  const results = await Promise.allSettled(jobs);
  clearInterval(sample);
  const refused = results.filter((r) => r.status === 'rejected');
  assert.equal(refused.length, extra, 'only the jobs past the cap and the queue are refused');
  for (const r of refused) {
    const err = (r as PromiseRejectedResult).reason as unknown;
    assert.ok(err instanceof AppError && err.code === 'unavailable' && err.retryAfterSeconds === 1, String(err));
  }
  for (const r of results) if (r.status === 'fulfilled') assert.ok(r.value.raw.length > INLINE_BYTES);
  assert.ok(most <= MAX_ONE_SHOTS && most > 0, `at most ${MAX_ONE_SHOTS} at once (saw ${most})`);
  assert.equal(oneShotsRunning(), 0, 'every slot given back');
});
