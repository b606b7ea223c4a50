// Refusals counted under the pool domain they concern (mail/refusal-counts.ts with the
// domain pool's poolDomainOf): a subdomain at any depth under its pool domain, any domain
// outside the pool under "(other)", so that a prober naming hundreds of invented domains or
// random labels cannot fill an hour's MAX_DOMAINS_PER_HOUR and push the pool's own refusals
// out of their domains. A real SQLite store and the real pool.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { createDomainPool } from '../../src/mail/domain-pool.js';
import { createRefusalCounts, MAX_DOMAINS_PER_HOUR, OTHER_DOMAINS } from '../../src/mail/refusal-counts.js';
import { openSqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import type { Store } from '../../src/storage/store.js';
import { tmp } from '../helpers/harness.js';

describe('refusal counts under the pool domain', () => {
  let dir: string;
  let store: Store;
  before(() => {
    dir = tmp('temp-inbox-refusals-');
    store = openSqliteStore(join(dir, 'refusals.sqlite'));
  });
  after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a subdomain counts under its pool domain, a domain outside the pool as (other), and probes cannot push the pool out', async () => {
    const now = () => 7 * 3_600_000 + 5;
    const pool = createDomainPool(store, { selection: 'first', retireGraceMs: 0, now });
    await pool.seed(['pool.test', 'sub.pool.test', 'other.test'], (d) => d === 'pool.test');
    assert.equal(pool.poolDomainOf('x.y.pool.test'), 'pool.test');
    assert.equal(pool.poolDomainOf('k3x9.sub.pool.test'), 'sub.pool.test', 'the longest pool domain it is under');
    assert.equal(pool.poolDomainOf('notpool.test'), undefined, 'a suffix of the name is not a parent domain');
    const counts = createRefusalCounts({ store, now, flushMs: 60_000, countedUnder: (d) => pool.poolDomainOf(d) });
    try {
      for (let i = 0; i < MAX_DOMAINS_PER_HOUR * 2; i++) counts.count('unknown_recipient', `invented${i}.example`);
      for (let i = 0; i < 3; i++) counts.count('unknown_recipient', `label${i}.deeper.pool.test`);
      counts.count('unknown_recipient', 'OTHER.test.');
      counts.count('rate_limit', undefined);
      await counts.flush();
      const rows = (await store.listRefusals(0)).map((r) => [r.reason, r.recipientDomain, r.count]);
      assert.deepEqual(rows, [
        ['rate_limit', '', 1],
        ['unknown_recipient', OTHER_DOMAINS, MAX_DOMAINS_PER_HOUR * 2],
        ['unknown_recipient', 'other.test', 1],
        ['unknown_recipient', 'pool.test', 3],
      ]);
    } finally {
      await counts.close();
    }
  });
});
