// The decoy hash an unknown sandbox name (or mail.tm address) is checked against is built
// as the service starts, so the first unknown-name login takes one hash like any other
// instead of two (which would tell that the name does not exist).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decoyPrepared, verifyPassword } from '../../src/domain/passwords.js';
import { serversStoppedAfter } from '../helpers/harness.js';

const start = serversStoppedAfter();

describe('decoy password hash', () => {
  it('is built at start-up, before any login', async () => {
    assert.equal(decoyPrepared(), false, 'nothing in this process built it yet');
    await start({ SANDBOXES: 'team-a:secret-a' });
    assert.equal(decoyPrepared(), true);
    // And an unknown name's check still answers false.
    assert.equal(await verifyPassword('anything', undefined), false);
  });
});
