// Verdicts reused on the server's thread (src/mail/auth/auth-reuse.ts; docs/decisions.md
// "Authentication verdicts"): an unsigned mail from the same client with the same From
// fields gets the verdict the checks' thread gave the last one, for as long as the thread
// keeps the SPF and DMARC results it was made of, and never a signed mail or one whose
// header block is not read field by field the same way. A real DNS server (dns2, started
// here) serves the records of the test domains; the checks run in their real thread.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { dkimSign } from 'mailauth';
import type { MailAuth } from '@temp-inbox/api';
import { checkMessage } from '../../../src/mail/auth/auth-check.js';
import { createAuthDns } from '../../../src/mail/auth/auth-dns.js';
import { createVerdictReuse, REUSE_HEADER_BYTES, reuseKey } from '../../../src/mail/auth/auth-reuse.js';
import { createMailAuthenticator } from '../../../src/mail/auth/auth.js';
import { startTestDns, type TestDns } from '../../helpers/dns-server.js';

const keys = generateKeyPairSync('rsa', { modulusLength: 2048 });
const PRIVATE_KEY = keys.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
const DKIM_RECORD = `v=DKIM1; k=rsa; p=${keys.publicKey.export({ type: 'spki', format: 'der' }).toString('base64')}`;

const client = { ip: '127.0.0.1', helo: 'client.test', sender: 'alice@pass.test' };

function message(from: string, subject = 'Verify your address', body = 'Your code is 482913.'): Buffer {
  return Buffer.from([`From: Sender <${from}>`, 'To: x@example.org', `Subject: ${subject}`, `Message-ID: <${Math.random()}@test>`, 'Content-Type: text/plain', '', body, ''].join('\r\n'));
}

async function signed(raw: Buffer, domain: string): Promise<Buffer> {
  // signTime: one reading of the clock for the t= signed and written (see mail-auth.test.ts's signed()).
  const options = { signTime: new Date(), signatureData: [{ signingDomain: domain, selector: 'sel', privateKey: PRIVATE_KEY, algorithm: 'rsa-sha256', canonicalization: 'relaxed/relaxed' }] };
  const r = await dkimSign(raw, options as never);
  assert.deepEqual(r.errors, []);
  return Buffer.concat([Buffer.from(r.signatures), raw]);
}

describe('the reuse key of a message', () => {
  it('is the same for the same client and From field whatever the rest, and differs with either', () => {
    const key = reuseKey(message('alice@pass.test'), client);
    assert.equal(typeof key, 'string');
    assert.equal(reuseKey(message('alice@pass.test', 'Another subject', 'Another body'), client), key);
    assert.notEqual(reuseKey(message('bob@pass.test'), client), key);
    assert.notEqual(reuseKey(message('Alice@pass.test'), client), key, 'compared byte for byte, not interpreted');
    for (const other of [{ ...client, ip: '127.0.0.2' }, { ...client, helo: 'other.test' }, { ...client, sender: 'bob@pass.test' }, { ...client, sender: '' }]) {
      assert.notEqual(reuseKey(message('alice@pass.test'), other), key, JSON.stringify(other));
    }
    // A folded From field is another field; so is a second From field.
    const folded = Buffer.from('From: Sender\r\n <alice@pass.test>\r\nSubject: s\r\n\r\nbody\r\n');
    const unfolded = Buffer.from('From: Sender <alice@pass.test>\r\nSubject: s\r\n\r\nbody\r\n');
    const twice = Buffer.from('From: Sender <alice@pass.test>\r\nSubject: s\r\nFrom: Other <bob@pass.test>\r\n\r\nbody\r\n');
    assert.equal(new Set([reuseKey(folded, client), reuseKey(unfolded, client), reuseKey(twice, client)]).size, 3);
    assert.equal(typeof reuseKey(Buffer.from('Subject: no author\r\n\r\nbody\r\n'), client), 'string');
  });

  it('is undefined for a signed or sealed message and for a header block not read the same way by every reader', () => {
    const plain = message('alice@pass.test').toString('latin1');
    const none = [
      `DKIM-Signature: v=1; d=pass.test; s=sel; b=AAAA\r\n${plain}`,
      `dkim-signature : v=1; d=pass.test\r\n${plain}`,
      `ARC-Seal: i=1; a=rsa-sha256; cv=none\r\n${plain}`,
      `arc-message-signature: i=1\r\n${plain}`,
      `ARC-Authentication-Results: i=1; mx.test\r\n${plain}`,
      plain.replaceAll('\r\n', '\n'),
      plain.replace('\r\nTo:', '\nTo:'),
      plain.replace('\r\nTo:', '\rTo:'),
      ` folded first line\r\n${plain}`,
      `no colon in this line\r\n${plain}`,
      `: empty name\r\n${plain}`,
      'From: Sender <alice@pass.test>\r\nSubject: no body',
      `X-Pad: ${'a'.repeat(REUSE_HEADER_BYTES)}\r\n${plain}`,
    ];
    for (const text of none) assert.equal(reuseKey(Buffer.from(text, 'latin1'), client), undefined, JSON.stringify(text.slice(0, 60)));
    // Just within the bound it is still read.
    const pad = REUSE_HEADER_BYTES - plain.indexOf('\r\n\r\n') - 4 - 'X-Pad: \r\n'.length;
    assert.equal(typeof reuseKey(Buffer.from(`X-Pad: ${'a'.repeat(pad)}\r\n${plain}`, 'latin1'), client), 'string');
    assert.equal(reuseKey(Buffer.from(`X-Pad: ${'a'.repeat(pad + 1)}\r\n${plain}`, 'latin1'), client), undefined);
  });

  it('keeps a verdict for what the thread said, less a second of clock slack, and never for a second or less', () => {
    const reuse = createVerdictReuse();
    const verdict: MailAuth = { spf: 'pass', dkim: [], dmarc: 'pass', arc: 'none' };
    reuse.set('short', verdict, 1000);
    reuse.set('long', verdict, 30_000);
    assert.equal(reuse.get('short'), undefined);
    assert.deepEqual(reuse.get('long'), verdict);
    assert.equal(reuse.reused, 1);
    reuse.clear();
    assert.equal(reuse.get('long'), undefined);
  });
});

describe('verdicts reused with real DNS', () => {
  let dns: TestDns;
  before(async () => {
    dns = await startTestDns();
    dns.zone.set('pass.test', { TXT: ['v=spf1 ip4:127.0.0.1 -all'] });
    dns.zone.set('sel._domainkey.pass.test', { TXT: [DKIM_RECORD] });
    dns.zone.set('_dmarc.pass.test', { TXT: ['v=DMARC1; p=reject'] });
    dns.zone.set('fail.test', { TXT: ['v=spf1 ip4:192.0.2.1 -all'] });
    dns.zone.set('_dmarc.fail.test', { TXT: ['v=DMARC1; p=reject'] });
  });
  after(() => dns?.close());

  it('the thread says how long an unsigned verdict holds, and nothing for a signed mail or a failure of the mail\'s own deadline', async () => {
    const resolver = createAuthDns({ servers: [dns.server] });
    const said: number[] = [];
    const check = (raw: Buffer, c = client, budgetMs = 2000) =>
      checkMessage(raw, c, { dns: resolver, deadline: performance.now() + budgetMs, mta: 'mx.test', reusableFor: (ms) => said.push(ms) });
    assert.deepEqual(await check(message('alice@pass.test')), { spf: 'pass', dkim: [], dmarc: 'pass', arc: 'none' });
    assert.equal(said.length, 1);
    // As long as the SPF and DMARC results are kept (30 s), no longer.
    const keptFor = [...resolver.recent.keys()].map((k) => resolver.recent.getRemainingTTL(k));
    assert.ok(said[0]! > 0 && said[0]! <= Math.min(...keptFor), `${said[0]} ms, results kept ${keptFor.join(', ')} ms`);
    await check(await signed(message('alice@pass.test'), 'pass.test'));
    assert.equal(said.length, 1, 'a signed mail is not reusable');
    // A name server that never answers: the temperror is this mail's own, not kept, so not reusable.
    dns.silent.add('late.test');
    const late = await check(message('dave@late.test'), { ...client, sender: 'dave@late.test' }, 300);
    assert.equal(late.spf, 'temperror');
    assert.equal(said.length, 1, 'a verdict cut short by its own deadline is not reusable');
  });

  it('the second unsigned mail from the same client and From is answered without the thread; a signed one, another author or client is not', async () => {
    const authenticator = createMailAuthenticator({ dnsServers: [dns.server], mta: 'mx.test' });
    try {
      const first = await authenticator.check(message('alice@pass.test'), client);
      assert.deepEqual(first, { spf: 'pass', dkim: [], dmarc: 'pass', arc: 'none' });
      assert.equal(authenticator.reused, 0);
      const asked = dns.queries.length;
      const second = await authenticator.check(message('alice@pass.test', 'Another subject', 'Another code: 111222.'), client);
      assert.deepEqual(second, first);
      assert.equal(authenticator.reused, 1);
      assert.equal(dns.queries.length, asked, 'nothing was looked up');

      // A signature changes the verdict: it goes to the thread.
      const signedOne = await authenticator.check(await signed(message('alice@pass.test'), 'pass.test'), client);
      assert.deepEqual(signedOne.dkim, [{ domain: 'pass.test', selector: 'sel', result: 'pass' }]);
      // Another author, another client: checked anew, with their own results.
      const other = await authenticator.check(message('mallory@fail.test'), client);
      assert.equal(other.dmarc, 'fail');
      const elsewhere = await authenticator.check(message('alice@pass.test'), { ...client, sender: 'mallory@fail.test' });
      assert.equal(elsewhere.spf, 'fail');
      assert.equal(authenticator.reused, 1);
      // Each of those is now reused in turn.
      assert.deepEqual(await authenticator.check(message('mallory@fail.test'), client), other);
      assert.equal(authenticator.reused, 2);
    } finally {
      await authenticator.close();
    }
  });
});
