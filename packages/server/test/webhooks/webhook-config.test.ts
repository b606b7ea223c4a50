// The webhook configuration (docs/deploy.md "Configuration"): WEBHOOK_URL with WEBHOOK_SECRET for
// the operator's webhook, WEBHOOK_ALLOW_PRIVATE, RATE_LIMIT_WEBHOOK. A bad value stops
// start-up with one line that names the variable and never repeats the value (a URL may
// carry a token, and the secret is a secret).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { ConfigError, loadConfig } from '../../src/config/index.js';
import { runExpectingFailure } from '../helpers/process.js';

const secret = (bytes = 32) => `whsec_${randomBytes(bytes).toString('base64')}`;

describe('webhook configuration', () => {
  it('has the documented defaults: no operator webhook, private addresses refused, RATE_LIMIT_WEBHOOK 30/60', () => {
    const c = loadConfig({});
    assert.equal(c.webhooks.url, undefined);
    assert.equal(c.webhooks.secret, undefined);
    assert.equal(c.webhooks.allowPrivate, false);
    assert.deepEqual(c.limits.routes.WEBHOOK, { max: 30, windowSeconds: 60 });
  });

  it('parses WEBHOOK_URL (normalised as the URL parser writes it), WEBHOOK_SECRET of 24 to 64 bytes, WEBHOOK_ALLOW_PRIVATE and RATE_LIMIT_WEBHOOK', () => {
    const s = secret();
    const c = loadConfig({ WEBHOOK_URL: 'https://Hooks.Example.COM/in?k=1', WEBHOOK_SECRET: s, WEBHOOK_ALLOW_PRIVATE: 'true', RATE_LIMIT_WEBHOOK: '5/10' });
    assert.equal(c.webhooks.url, 'https://hooks.example.com/in?k=1');
    assert.equal(c.webhooks.secret, s);
    assert.equal(c.webhooks.allowPrivate, true);
    assert.deepEqual(c.limits.routes.WEBHOOK, { max: 5, windowSeconds: 10 });
    for (const bytes of [24, 64]) assert.equal(loadConfig({ WEBHOOK_URL: 'https://hooks.example/', WEBHOOK_SECRET: secret(bytes) }).webhooks.secret?.length, 6 + Math.ceil(bytes / 3) * 4);
    assert.equal(loadConfig({ WEBHOOK_ALLOW_PRIVATE: 'false' }).webhooks.allowPrivate, false);
    assert.equal(loadConfig({ RATE_LIMITS: 'off' }).limits.routes.WEBHOOK.max, 0, 'RATE_LIMITS=off turns it off');
  });

  it('refuses a bad value in one line naming the variable, never repeating the value', () => {
    const s = secret();
    const cases: [Record<string, string>, RegExp][] = [
      [{ WEBHOOK_URL: 'https://hooks.example/token-s3cret' }, /^WEBHOOK_URL and WEBHOOK_SECRET must be set together/],
      [{ WEBHOOK_SECRET: s }, /^WEBHOOK_URL and WEBHOOK_SECRET must be set together/],
      [{ WEBHOOK_URL: 'ftp://hooks.example/s3cret', WEBHOOK_SECRET: s }, /^WEBHOOK_URL is invalid: expected an http:\/\/ or https:\/\/ URL .*; this one must start with http:\/\/ or https:\/\/\.$/],
      [{ WEBHOOK_URL: 'https://user:s3cret@hooks.example/', WEBHOOK_SECRET: s }, /^WEBHOOK_URL is invalid: .*user name or password\.$/],
      [{ WEBHOOK_URL: 'https://hooks.example:25/s3cret', WEBHOOK_SECRET: s }, /^WEBHOOK_URL is invalid: .*port 25/],
      [{ WEBHOOK_URL: 's3cret', WEBHOOK_SECRET: s }, /^WEBHOOK_URL is invalid/],
      [{ WEBHOOK_URL: 'https://hooks.example/', WEBHOOK_SECRET: 's3cret-not-whsec' }, /^WEBHOOK_SECRET is invalid: expected whsec_ followed by the base64 of 24 to 64 random bytes\.$/],
      [{ WEBHOOK_URL: 'https://hooks.example/', WEBHOOK_SECRET: `whsec_${Buffer.from('s3cret').toString('base64')}` }, /^WEBHOOK_SECRET is invalid/],
      [{ WEBHOOK_URL: 'https://hooks.example/', WEBHOOK_SECRET: secret(23) }, /^WEBHOOK_SECRET is invalid/],
      [{ WEBHOOK_URL: 'https://hooks.example/', WEBHOOK_SECRET: secret(65) }, /^WEBHOOK_SECRET is invalid/],
      [{ WEBHOOK_URL: 'https://hooks.example/', WEBHOOK_SECRET: `${s}!` }, /^WEBHOOK_SECRET is invalid/],
      [{ WEBHOOK_ALLOW_PRIVATE: 'sometimes' }, /^WEBHOOK_ALLOW_PRIVATE is invalid: expected true or false\.$/],
      [{ RATE_LIMIT_WEBHOOK: '5' }, /^RATE_LIMIT_WEBHOOK is invalid/],
    ];
    for (const [env, message] of cases) {
      assert.throws(
        () => loadConfig(env),
        (err: Error) => {
          assert.ok(err instanceof ConfigError, String(err));
          assert.match(err.message, message, JSON.stringify(env));
          assert.ok(!err.message.includes('s3cret') && !err.message.includes(s.slice(6)), `the value is not repeated: ${err.message}`);
          assert.ok(!err.message.includes('\n'));
          return true;
        },
      );
    }
  });

  it('the service refuses to start with WEBHOOK_URL but no WEBHOOK_SECRET, in one line', async () => {
    const { code, stderr } = await runExpectingFailure({ WEBHOOK_URL: 'https://hooks.example/in?token=s3cret' });
    assert.equal(code, 2);
    assert.equal(stderr, 'temp-inbox: WEBHOOK_URL and WEBHOOK_SECRET must be set together: the secret signs every delivery to the URL.\n');
  });
});
