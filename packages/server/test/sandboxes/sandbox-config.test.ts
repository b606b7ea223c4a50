// SANDBOXES and the sandboxes' variables in the configuration (docs/decisions.md
// "Sandboxes"): pairs parsed as Mailpit's MP_SMTP_AUTH (the password everything after the
// first ':'), one clear line for a bad value that never repeats a password, the defaults,
// and MAIL_DOMAINS refused when it names the sandboxes' reserved domain.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, loadConfig } from '../../src/config/index.js';

describe('SANDBOXES', () => {
  it('parses name:password pairs (names lower-cased, a password may hold ":"), and defaults', () => {
    const config = loadConfig({ SANDBOXES: '  Team-A:s3cret:with:colons   team.b:p@ss ' });
    assert.deepEqual(config.sandboxes.logins, [
      { name: 'team-a', password: 's3cret:with:colons' },
      { name: 'team.b', password: 'p@ss' },
    ]);
    const defaults = loadConfig({});
    assert.deepEqual(defaults.sandboxes.logins, []);
    assert.equal(defaults.sandboxes.maxMails, 1000);
    assert.equal(defaults.sandboxes.maxBytes, 100 * 1024 * 1024);
    assert.equal(defaults.sandboxes.retentionMs, 7 * 86_400_000);
    assert.equal(defaults.smtp.authAllowInsecure, false);
    assert.deepEqual(defaults.limits.sandboxLogin.client, { max: 10, windowSeconds: 900 });
    assert.deepEqual(defaults.limits.sandboxLogin.login, { max: 30, windowSeconds: 900 });
  });

  it('a bad value is one line naming the pair, never a password', () => {
    for (const [raw, says] of [
      ['team-a', /pair 1 is not name:password/],
      ['ok:pw :nameless', /pair 2 is not name:password/],
      ['bad_name!:topsecret', /pair 1's name is not/],
      ['-dash:topsecret', /pair 1's name is not/],
      ['team:', /pair 1 \(team\): A sandbox password must not be empty/],
      ['a:topsecret a:othersecret', /a is named twice/],
      [`long:${'x'.repeat(1025)}`, /at most 1024 characters/],
    ] as const) {
      assert.throws(
        () => loadConfig({ SANDBOXES: raw }),
        (err: Error) => {
          assert.ok(err instanceof ConfigError);
          assert.match(err.message, /^SANDBOXES is invalid: expected space-separated name:password pairs \(/);
          assert.match(err.message, says);
          assert.doesNotMatch(err.message, /topsecret|othersecret|xxxx/);
          assert.doesNotMatch(err.message, /\n/);
          return true;
        },
        raw,
      );
    }
  });

  it('MAIL_DOMAINS may not name sandbox.invalid', () => {
    assert.throws(() => loadConfig({ MAIL_DOMAINS: 'example.com,sandbox.invalid' }), /MAIL_DOMAINS must not name sandbox\.invalid/);
  });
});
