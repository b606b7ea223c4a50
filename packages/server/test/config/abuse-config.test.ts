// The abuse controls' variables (docs/operating.md "Abuse controls"): their defaults, what
// each takes, and a bad value stopping start-up with one line naming the variable.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, loadConfig } from '../../src/config/index.js';

const refused = (env: Record<string, string>, name: string) =>
  assert.throws(
    () => loadConfig(env),
    (err: unknown) => err instanceof ConfigError && err.message.startsWith(`${name} is invalid: expected`) && !err.message.includes('\n'),
    JSON.stringify(env),
  );

describe('abuse controls configuration', () => {
  it('defaults: no limit per sending domain, no refusal by score, no abuse contact', () => {
    const c = loadConfig({});
    assert.equal(c.limits.smtp.senderDomain.max, 0);
    assert.equal(c.report.refuseScore, undefined);
    assert.equal(c.mail.abuseContact, undefined);
  });

  it('SENDER_DOMAIN_RATE_LIMIT takes <max>/<seconds> or 0, and RATE_LIMITS=off turns it off', () => {
    assert.deepEqual(loadConfig({ SENDER_DOMAIN_RATE_LIMIT: '200/3600' }).limits.smtp.senderDomain, { max: 200, windowSeconds: 3600 });
    assert.equal(loadConfig({ SENDER_DOMAIN_RATE_LIMIT: '200/3600', RATE_LIMITS: 'off' }).limits.smtp.senderDomain.max, 0);
    for (const bad of ['abc', '10', '10/0', '-1/60', '1/60/2']) refused({ SENDER_DOMAIN_RATE_LIMIT: bad }, 'SENDER_DOMAIN_RATE_LIMIT');
  });

  it('SPAM_REFUSE_SCORE takes a number', () => {
    assert.equal(loadConfig({ SPAM_REFUSE_SCORE: '15' }).report.refuseScore, 15);
    assert.equal(loadConfig({ SPAM_REFUSE_SCORE: '7.5' }).report.refuseScore, 7.5);
    assert.equal(loadConfig({ SPAM_REFUSE_SCORE: '-2' }).report.refuseScore, -2);
    for (const bad of ['high', '1e3', '5,5', 'NaN', 'Infinity', '1.2345']) refused({ SPAM_REFUSE_SCORE: bad }, 'SPAM_REFUSE_SCORE');
  });

  it('ABUSE_CONTACT takes an email address or an http(s) URL, printable and short', () => {
    assert.equal(loadConfig({ ABUSE_CONTACT: 'abuse@example.com' }).mail.abuseContact, 'abuse@example.com');
    assert.equal(loadConfig({ ABUSE_CONTACT: 'https://example.com/abuse?from=smtp' }).mail.abuseContact, 'https://example.com/abuse?from=smtp');
    for (const bad of ['abuse', 'abuse@', 'ftp://example.com/x', 'javascript:alert(1)', 'a b@example.com', 'abuse@exämple.com', `https://example.com/${'x'.repeat(200)}`, 'abuse@example.com\r\n250 ok']) {
      refused({ ABUSE_CONTACT: bad }, 'ABUSE_CONTACT');
    }
  });
});
