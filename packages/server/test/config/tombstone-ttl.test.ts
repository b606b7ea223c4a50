// ADDRESS_TOMBSTONE_TTL (docs/decisions.md "Deleted address"): forever by default, `forever`
// or 0 for ever, a duration otherwise; anything else is refused with the variable's name.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../src/config/index.js';

describe('ADDRESS_TOMBSTONE_TTL', () => {
  it('is for ever (0) by default, with forever or 0, and a duration otherwise', () => {
    assert.equal(loadConfig({}).mail.addressTombstoneTtlMs, 0);
    assert.equal(loadConfig({ ADDRESS_TOMBSTONE_TTL: 'forever' }).mail.addressTombstoneTtlMs, 0);
    assert.equal(loadConfig({ ADDRESS_TOMBSTONE_TTL: 'Forever' }).mail.addressTombstoneTtlMs, 0);
    assert.equal(loadConfig({ ADDRESS_TOMBSTONE_TTL: '0' }).mail.addressTombstoneTtlMs, 0);
    assert.equal(loadConfig({ ADDRESS_TOMBSTONE_TTL: '90d' }).mail.addressTombstoneTtlMs, 90 * 86_400_000);
    assert.equal(loadConfig({ ADDRESS_TOMBSTONE_TTL: '12h' }).mail.addressTombstoneTtlMs, 12 * 3_600_000);
  });

  it('refuses anything else, naming the variable', () => {
    for (const raw of ['never', '-1d', 'soon']) {
      assert.throws(() => loadConfig({ ADDRESS_TOMBSTONE_TTL: raw }), /^ConfigError: ADDRESS_TOMBSTONE_TTL is invalid: expected a duration/, raw);
    }
  });
});
