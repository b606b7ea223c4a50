// The storage contract's refusal-count cases (refusal-store.ts; docs/operating.md "Abuse
// controls"), run by store-contract.ts against every backend: a batch adds to each row's
// count (rows created at their first count), reads return the hours since a point in order,
// and the sweep's prune removes older hours only.
import assert from 'node:assert/strict';
import type { Store } from '../../src/storage/store.js';

type Case = [name: string, run: (store: Store) => Promise<void>];

const H = 3_600_000;
const T0 = Math.floor(1_700_000_000_000 / H) * H;

export const REFUSAL_CASES: Case[] = [
  [
    'refusals: batches add to the rows of their hour, reason and domain; listed since a point in order',
    async (s) => {
      assert.deepEqual(await s.listRefusals(0), []);
      await s.addRefusals([]);
      await s.addRefusals([
        { hour: T0, reason: 'unknown_recipient', recipientDomain: 'a.test', count: 2 },
        { hour: T0, reason: 'blocked', recipientDomain: '', count: 1 },
        { hour: T0 + H, reason: 'unknown_recipient', recipientDomain: 'a.test', count: 1 },
      ]);
      await s.addRefusals([
        { hour: T0, reason: 'unknown_recipient', recipientDomain: 'a.test', count: 3 },
        { hour: T0, reason: 'unknown_recipient', recipientDomain: 'b.test', count: 1 },
      ]);
      assert.deepEqual(await s.listRefusals(T0), [
        { hour: T0, reason: 'blocked', recipientDomain: '', count: 1 },
        { hour: T0, reason: 'unknown_recipient', recipientDomain: 'a.test', count: 5 },
        { hour: T0, reason: 'unknown_recipient', recipientDomain: 'b.test', count: 1 },
        { hour: T0 + H, reason: 'unknown_recipient', recipientDomain: 'a.test', count: 1 },
      ]);
      assert.deepEqual(await s.listRefusals(T0 + H), [{ hour: T0 + H, reason: 'unknown_recipient', recipientDomain: 'a.test', count: 1 }]);
    },
  ],
  [
    'refusals: counts adding up concurrently lose nothing',
    async (s) => {
      const row = { hour: T0, reason: 'rate_limit', recipientDomain: 'c.test', count: 1 };
      await Promise.all(Array.from({ length: 20 }, () => s.addRefusals([row])));
      assert.deepEqual(await s.listRefusals(T0), [{ ...row, count: 20 }]);
    },
  ],
  [
    'refusals: the prune removes the hours before its cutoff only',
    async (s) => {
      await s.addRefusals([
        { hour: T0, reason: 'busy', recipientDomain: '', count: 1 },
        { hour: T0 + H, reason: 'busy', recipientDomain: '', count: 1 },
        { hour: T0 + 2 * H, reason: 'busy', recipientDomain: '', count: 1 },
      ]);
      assert.equal(await s.purgeRefusals(T0 + H), 1);
      assert.deepEqual((await s.listRefusals(0)).map((r) => r.hour), [T0 + H, T0 + 2 * H]);
      assert.equal(await s.purgeRefusals(T0 + H), 0);
    },
  ],
];
