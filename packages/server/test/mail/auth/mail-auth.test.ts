// Authentication verdicts (docs/decisions.md "Authentication verdicts"): SPF, DKIM,
// DMARC and ARC of every mail, computed before its 250 from the SMTP client's
// address, HELO and MAIL FROM. A real DNS server (dns2, started here) serves the
// records of test domains; mail signed with a test key is sent over real SMTP to a
// real server whose DNS_SERVERS points at it. The client is 127.0.0.1.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { dkimSign, dkimVerify, sealMessage } from 'mailauth';
import type { MailAuth, MailMetadata } from '@temp-inbox/api';
import { MAX_METADATA_BYTES } from '../../../src/mail/parse/parse.js';
import { checkMessage, headerFields, MAX_AUTH_HEADER_FIELDS } from '../../../src/mail/auth/auth-check.js';
import { unsignedView } from '../../../src/mail/auth/auth-unsigned.js';
import { createMailAuthenticator } from '../../../src/mail/auth/auth.js';
import { parseHeaders } from '../../../src/mail/auth/mailauth-patches.js';
import { createAuthDns } from '../../../src/mail/auth/auth-dns.js';
import { authJsonBytes, dkimEntry, MAX_AUTH_JSON_BYTES, MAX_DKIM_DOMAIN_CHARS, MAX_DKIM_SELECTOR_CHARS, verdict } from '../../../src/mail/auth/auth-verdict.js';
import { buildMetadata } from '../../../src/mail/parse/metadata.js';
import { startTestDns, type TestDns } from '../../helpers/dns-server.js';
import { openEventStream } from '../../helpers/event-stream.js';
import { createAddress, request, SmtpClient, startTestServer, type TestServer } from '../../helpers/harness.js';

const keys = generateKeyPairSync('rsa', { modulusLength: 2048 });
const PRIVATE_KEY = keys.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
const DKIM_RECORD = `v=DKIM1; k=rsa; p=${keys.publicKey.export({ type: 'spki', format: 'der' }).toString('base64')}`;

/** The records of the test domains: each named for what its mail should get. */
function fillZone(dns: TestDns): void {
  const domain = (name: string, spf: string | undefined, dmarc: string | undefined, key = true) => {
    if (spf) dns.zone.set(name, { TXT: [spf] });
    if (key) dns.zone.set(`sel._domainkey.${name}`, { TXT: [DKIM_RECORD] });
    if (dmarc) dns.zone.set(`_dmarc.${name}`, { TXT: [dmarc] });
  };
  // 127.0.0.1, the test's client, is allowed.
  domain('pass.test', 'v=spf1 ip4:127.0.0.1 -all', 'v=DMARC1; p=reject');
  // Only 192.0.2.1 may send for it: 127.0.0.1 fails.
  domain('fail.test', 'v=spf1 ip4:192.0.2.1 -all', 'v=DMARC1; p=reject');
  // Signed, but no key published.
  domain('nokey.test', 'v=spf1 ip4:127.0.0.1 -all', 'v=DMARC1; p=none', false);
  // The HELO name of a null sender's client.
  dns.zone.set('helo.pass.test', { TXT: ['v=spf1 ip4:127.0.0.1 -all'] });
  // A forwarder that seals with ARC.
  domain('forwarder.test', undefined, undefined);
  // Every record of slow.test is asked for and never answered.
  for (const name of ['slow.test', 'sel._domainkey.slow.test', '_dmarc.slow.test']) dns.silent.add(name);
}

const crlf = (lines: string[]) => lines.join('\r\n');

function plainMessage(from: string, to: string, body = 'Your code is 482913.'): Buffer {
  return Buffer.from(
    crlf([`From: Sender <${from}>`, `To: ${to}`, 'Subject: Verify your address', 'Date: Tue, 24 Nov 2026 10:00:00 +0000', `Message-ID: <${Math.random()}@test>`, 'MIME-Version: 1.0', 'Content-Type: text/plain; charset=utf-8', '', body, '']),
  );
}

async function signed(message: Buffer, domain: string, selector = 'sel'): Promise<Buffer> {
  // mailauth's types describe the options of one signature; it takes a list (signatureData).
  // signTime: without it mailauth reads the clock twice, for the t= it signs and the t= it
  // writes, so a signature made across a half-second boundary fails (1 in about 300 here).
  const options = { signTime: new Date(), signatureData: [{ signingDomain: domain, selector, privateKey: PRIVATE_KEY, algorithm: 'rsa-sha256', canonicalization: 'relaxed/relaxed' }] };
  const r = await dkimSign(message, options as never);
  assert.deepEqual(r.errors, []);
  return Buffer.concat([Buffer.from(r.signatures), message]);
}

/** One SMTP session: EHLO `helo`, MAIL FROM `from`, the message; answers the reply to the data and how long it took. */
async function send(server: TestServer, opts: { helo?: string; from: string; to: string; message: Buffer }): Promise<{ code: number; ms: number }> {
  const smtp = await SmtpClient.connect(server.smtpPort);
  try {
    await smtp.script([
      [`EHLO ${opts.helo ?? 'client.test'}`, 250],
      [`MAIL FROM:<${opts.from}>`, 250],
      [`RCPT TO:<${opts.to}>`, 250],
      ['DATA', 354],
    ]);
    const t = performance.now();
    const reply = await smtp.data(opts.message);
    return { code: reply.code, ms: performance.now() - t };
  } finally {
    await smtp.quit();
  }
}

async function latestMetadata(server: TestServer, jwt: string): Promise<MailMetadata & { uuid: string }> {
  const list = await request(server.httpUrl, '/api/mails?limit=1&offset=0', { jwt });
  assert.equal(list.status, 200);
  return { ...(JSON.parse(list.json.results[0].metadata) as MailMetadata), uuid: list.json.results[0].uuid as string };
}

describe('authentication verdicts', () => {
  let dns: TestDns;
  let server: TestServer;
  let inbox: { address: string; jwt: string };
  before(async () => {
    dns = await startTestDns();
    fillZone(dns);
    server = await startTestServer({ DNS_SERVERS: dns.server });
    inbox = await createAddress(server);
  });
  after(async () => {
    await server?.close();
    await dns?.close();
  });

  it('a signed mail from an allowed client: SPF, DKIM and DMARC pass, no ARC chain; in the list, the parsed mail and the push event', async () => {
    const stream = await openEventStream(server.httpUrl, '/api/events', { authorization: `Bearer ${inbox.jwt}` });
    try {
      const r = await send(server, { from: 'alice@pass.test', to: inbox.address, message: await signed(plainMessage('alice@pass.test', inbox.address), 'pass.test') });
      assert.equal(r.code, 250);
      const want: MailAuth = { spf: 'pass', dkim: [{ domain: 'pass.test', selector: 'sel', result: 'pass' }], dmarc: 'pass', arc: 'none' };
      const event = JSON.parse((await stream.next('mail')).data);
      assert.deepEqual(JSON.parse(event.metadata).auth, want, 'in the push event, with the first delivery');
      const meta = await latestMetadata(server, inbox.jwt);
      assert.deepEqual(meta.auth, want, 'in the list');
      const parsed = await request(server.httpUrl, `/api/mail/${meta.uuid}/parsed`, { jwt: inbox.jwt });
      assert.equal(parsed.status, 200);
      assert.deepEqual(parsed.json.auth, want, 'in the parsed mail');
      assert.equal(parsed.json.subject, 'Verify your address', 'the rest of the parsed mail is unchanged');
      const waited = await request(server.httpUrl, '/api/mails/wait?since=0&timeout=0', { jwt: inbox.jwt });
      assert.deepEqual(JSON.parse(waited.json.results[0].metadata).auth, want, 'in a wait');
    } finally {
      stream.close();
    }
  });

  it('a body altered after signing fails DKIM; a client the SPF record does not allow fails SPF; DMARC then fails', async () => {
    const message = await signed(plainMessage('bob@fail.test', inbox.address, 'Your code is 111111.'), 'fail.test');
    const altered = Buffer.from(message.toString('latin1').replace('111111', '999999'), 'latin1');
    assert.equal((await send(server, { from: 'bob@fail.test', to: inbox.address, message: altered })).code, 250);
    assert.deepEqual((await latestMetadata(server, inbox.jwt)).auth, { spf: 'fail', dkim: [{ domain: 'fail.test', selector: 'sel', result: 'fail' }], dmarc: 'fail', arc: 'none' });
  });

  it('a signature whose key is not published is permerror; DMARC passes on the aligned SPF pass', async () => {
    const message = await signed(plainMessage('carol@nokey.test', inbox.address), 'nokey.test');
    assert.equal((await send(server, { from: 'carol@nokey.test', to: inbox.address, message })).code, 250);
    assert.deepEqual((await latestMetadata(server, inbox.jwt)).auth, { spf: 'pass', dkim: [{ domain: 'nokey.test', selector: 'sel', result: 'permerror' }], dmarc: 'pass', arc: 'none' });
  });

  it('an unsigned mail has no DKIM entries; a domain without records is none', async () => {
    assert.equal((await send(server, { from: 'dave@pass.test', to: inbox.address, message: plainMessage('dave@pass.test', inbox.address) })).code, 250);
    assert.deepEqual((await latestMetadata(server, inbox.jwt)).auth, { spf: 'pass', dkim: [], dmarc: 'pass', arc: 'none' });
    assert.equal((await send(server, { from: 'erin@unknown.test', to: inbox.address, message: plainMessage('erin@unknown.test', inbox.address) })).code, 250);
    assert.deepEqual((await latestMetadata(server, inbox.jwt)).auth, { spf: 'none', dkim: [], dmarc: 'none', arc: 'none' });
  });

  it('a null sender is checked by its HELO name (RFC 7208 §2.4)', async () => {
    const message = await signed(plainMessage('mailer-daemon@pass.test', inbox.address), 'pass.test');
    assert.equal((await send(server, { helo: 'helo.pass.test', from: '', to: inbox.address, message })).code, 250);
    const auth = (await latestMetadata(server, inbox.jwt)).auth!;
    assert.equal(auth.spf, 'pass');
    assert.equal(auth.dmarc, 'pass', 'aligned DKIM');
  });

  it('DNS that never answers: temperror, and the mail is still taken with 250 within the 2 s budget', async () => {
    const message = await signed(plainMessage('frank@slow.test', inbox.address), 'slow.test');
    const r = await send(server, { from: 'frank@slow.test', to: inbox.address, message });
    assert.equal(r.code, 250);
    // The budget, and room for a loaded machine's parse and commit.
    assert.ok(r.ms < 2000 + 1500, `the 250 came ${Math.round(r.ms)} ms after the data`);
    assert.deepEqual((await latestMetadata(server, inbox.jwt)).auth, { spf: 'temperror', dkim: [{ domain: 'slow.test', selector: 'sel', result: 'temperror' }], dmarc: 'temperror', arc: 'none' });
    assert.ok(dns.queries.includes('TXT slow.test') && dns.queries.includes('TXT sel._domainkey.slow.test'), 'the look-ups were made');
  });

  it('a mail forwarded with an ARC seal: ARC passes', async () => {
    const original = await signed(plainMessage('grace@pass.test', inbox.address), 'pass.test');
    // The first seal of a chain (cv=none), with the forwarder's own Authentication-Results; mailauth's types lack those two.
    const options = {
      signingDomain: 'forwarder.test',
      selector: 'sel',
      privateKey: PRIVATE_KEY,
      authResults: 'mx.forwarder.test; spf=pass smtp.mailfrom=pass.test; dkim=pass header.d=pass.test',
      cv: 'none',
      signTime: new Date(),
    };
    const seal = await sealMessage(original, options as never);
    const sealed = Buffer.concat([seal, original]);
    assert.equal((await send(server, { from: 'list@pass.test', to: inbox.address, message: sealed })).code, 250);
    const auth = (await latestMetadata(server, inbox.jwt)).auth!;
    assert.equal(auth.arc, 'pass');
    assert.deepEqual(auth.dkim, [{ domain: 'pass.test', selector: 'sel', result: 'pass' }]);
  });

  it('AUTH_CHECKS=off stores no verdict', async () => {
    const off = await startTestServer({ AUTH_CHECKS: 'off', DNS_SERVERS: dns.server });
    try {
      const box = await createAddress(off);
      const asked = dns.queries.length;
      assert.equal((await send(off, { from: 'alice@pass.test', to: box.address, message: await signed(plainMessage('alice@pass.test', box.address), 'pass.test') })).code, 250);
      const meta = await latestMetadata(off, box.jwt);
      assert.equal('auth' in meta, false);
      assert.equal(dns.queries.length, asked, 'nothing was looked up');
      const parsed = await request(off.httpUrl, `/api/mail/${meta.uuid}/parsed`, { jwt: box.jwt });
      assert.equal('auth' in parsed.json, false);
    } finally {
      await off.close();
    }
  });
});

describe('authentication checks of one message', () => {
  let dns: TestDns;
  before(async () => {
    dns = await startTestDns();
    fillZone(dns);
  });
  after(() => dns?.close());
  const client = { ip: '127.0.0.1', helo: 'client.test', sender: 'alice@pass.test' };
  const check = (raw: Buffer, budgetMs = 2000) => checkMessage(raw, client, { dns: createAuthDns({ servers: [dns.server] }), deadline: performance.now() + budgetMs, mta: 'mx.test' });

  it('lists each signature in header order, at most 10; one it cannot read is permerror', async () => {
    let message = plainMessage('alice@pass.test', 'x@example.org');
    for (let i = 0; i < 12; i++) message = await signed(message, i % 2 ? 'pass.test' : 'nokey.test');
    const auth = await check(Buffer.concat([Buffer.from('DKIM-Signature: v=1; a=rsa-sha256; d=broken.test; b=AAAA\r\n'), message]));
    assert.equal(auth.dkim.length, 10);
    assert.deepEqual(auth.dkim[0], { domain: 'broken.test', selector: '', result: 'permerror' });
    // dkimSign's signatures go on top, so the last one made is first.
    assert.deepEqual(auth.dkim[1], { domain: 'pass.test', selector: 'sel', result: 'pass' });
    assert.deepEqual(auth.dkim[2], { domain: 'nokey.test', selector: 'sel', result: 'permerror' });
  });

  it('a header block past 1 MiB is not read: DKIM, DMARC and ARC permerror, SPF still checked', async () => {
    // 120 fields (well under the field limit) of 9,000 bytes.
    const huge = Buffer.concat([Buffer.from(`X-Pad: ${'a'.repeat(9000)}\r\n`.repeat(120)), plainMessage('alice@pass.test', 'x@example.org')]);
    assert.ok(huge.indexOf('\r\n\r\n') > 1024 * 1024);
    assert.deepEqual(await check(huge), { spf: 'pass', dkim: [{ domain: '', selector: '', result: 'permerror' }], dmarc: 'permerror', arc: 'permerror' });
  });

  it(`a header block of ${MAX_AUTH_HEADER_FIELDS} fields is read; one of ${MAX_AUTH_HEADER_FIELDS + 1} is not: DKIM, DMARC and ARC permerror, SPF still checked`, async () => {
    const plain = plainMessage('alice@pass.test', 'x@example.org');
    const own = headerFields(plain)!.fields.length;
    const padded = (fields: number) => Buffer.concat([Buffer.from(Array.from({ length: fields - own }, (_, i) => `X-Pad-${i}: v\r\n`).join('')), plain]);
    assert.equal(headerFields(padded(MAX_AUTH_HEADER_FIELDS))!.fields.length, MAX_AUTH_HEADER_FIELDS);
    assert.equal(headerFields(padded(MAX_AUTH_HEADER_FIELDS + 1)), undefined);
    const read = await check(padded(MAX_AUTH_HEADER_FIELDS));
    assert.equal(read.dmarc, 'pass', 'the From field, after 993 others, was read');
    assert.deepEqual(read, await check(plain));
    assert.deepEqual(await check(padded(MAX_AUTH_HEADER_FIELDS + 1)), { spf: 'pass', dkim: [{ domain: '', selector: '', result: 'permerror' }], dmarc: 'permerror', arc: 'permerror' });
  });

  it('reads the header block as mailauth does, in one pass: the same fields for folded, empty and odd blocks', () => {
    // mailauth's own parseHeaders, from a copy of its module loaded afresh (the loaded one is replaced).
    const require = createRequire(import.meta.url);
    const path = require.resolve('mailauth/lib/tools.js');
    const loaded = require.cache[path];
    delete require.cache[path];
    const original = (require(path) as { parseHeaders: typeof parseHeaders }).parseHeaders;
    require.cache[path] = loaded;
    assert.notEqual(original, parseHeaders);
    const blocks = [
      'From: a@b.test\r\nSubject: one\r\n two\r\n\tthree\r\nTo: c@d.test\r\n\r\n',
      ' starts folded\r\n more\r\nX: y\n folded with LF\nno colon here\r\n\r\n\r\n',
      '',
      '\r\n',
      'A:\r\nB :  spaced \r\n\r\n \r\n',
      `X-Long: ${Array.from({ length: 500 }, (_, i) => `w${i}`).join('\r\n ')}\r\nFrom: a@b.test\r\n`,
    ];
    for (const block of blocks) {
      const buf = Buffer.from(block, 'binary');
      assert.deepEqual(parseHeaders(buf), original(buf), JSON.stringify(block.slice(0, 60)));
    }
  });

  it('a folded field of 400 KB is read in a moment, not in seconds (mailauth\'s own reading is quadratic in its lines)', async () => {
    // Its own reading took 13 s of CPU for this field, over the 3 s given here for hashing on top of DNS.
    const folded = `X-Folded: ${Array.from({ length: 100_000 }, () => 'a b').join('\r\n ')}\r\n`;
    const message = Buffer.concat([Buffer.from(folded), plainMessage('alice@pass.test', 'x@example.org')]);
    assert.ok(message.length > 400_000 && message.length < 1024 * 1024);
    const authenticator = createMailAuthenticator({ dnsServers: [dns.server], mta: 'mx.test', cpuMs: 3000 });
    try {
      assert.deepEqual(await authenticator.check(message, client), { spf: 'pass', dkim: [], dmarc: 'pass', arc: 'none' });
    } finally {
      await authenticator.close();
    }
  });

  it('checks asked for at once go to the thread together, and each is answered when it is done, not when its batch is', async () => {
    const authenticator = createMailAuthenticator({ dnsServers: [dns.server], mta: 'mx.test' });
    try {
      // Asked for in one turn: one batch of the first 16, then the rest; one of them waits for DNS that never answers.
      const messages = await Promise.all(Array.from({ length: 20 }, () => signed(plainMessage('alice@pass.test', 'x@example.org'), 'pass.test')));
      // Once first, so that the thread has started (from source, loading it takes a good part of the 2 s budget).
      await authenticator.check(messages[0]!, client);
      let slowAnswered = false;
      const slow = authenticator.check(plainMessage('bob@slow.test', 'x@example.org'), { ...client, sender: 'bob@slow.test' }).then((v) => {
        slowAnswered = true;
        return v;
      });
      const fast = messages.map((m) => authenticator.check(m, client));
      for (const verdict of await Promise.all(fast)) assert.deepEqual(verdict, { spf: 'pass', dkim: [{ domain: 'pass.test', selector: 'sel', result: 'pass' }], dmarc: 'pass', arc: 'none' });
      assert.equal(slowAnswered, false, 'the mails of the batch did not wait for the one whose DNS is silent');
      assert.deepEqual(await slow, { spf: 'temperror', dkim: [], dmarc: 'temperror', arc: 'none' });
    } finally {
      await authenticator.close();
    }
  });

  it('a check past its CPU budget ends its thread: its mail gets temperror, and the checks after it run on a new thread', async () => {
    // 8.8 MB of body for a signature's relaxed body hash: over a second of reading, against 0.5 + 0.02 s.
    const heavy = Buffer.concat([
      Buffer.from('DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed; d=pass.test; s=sel; h=from; bh=AAAA; b=AAAA\r\n'),
      plainMessage('alice@pass.test', 'x@example.org', ' a  b\t c \r\n'.repeat(800_000)),
    ]);
    const authenticator = createMailAuthenticator({ dnsServers: [dns.server], mta: 'mx.test', budgetMs: 500, cpuMs: 20 });
    const pass = { spf: 'pass', dkim: [], dmarc: 'pass', arc: 'none' };
    /** The verdict once the thread is up (starting it from source takes longer than this budget: meanwhile temperror). */
    const once = async (message: Buffer) => {
      for (let i = 0; i < 100; i++) {
        const verdict = await authenticator.check(message, client);
        if (verdict.spf !== 'temperror') return verdict;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      return undefined;
    };
    try {
      assert.deepEqual(await once(plainMessage('alice@pass.test', 'x@example.org')), pass);
      assert.deepEqual(await authenticator.check(heavy, client), { spf: 'temperror', dkim: [{ domain: '', selector: '', result: 'temperror' }], dmarc: 'temperror', arc: 'temperror' });
      assert.deepEqual(await once(plainMessage('alice@pass.test', 'x@example.org')), pass);
    } finally {
      await authenticator.close();
    }
  });

  it('an unsigned mail is read without the DKIM verifier, with the same result it gives', async () => {
    const froms = [
      ['From: Alice <alice@pass.test>'],
      ['From: alice@pass.test, "Bob, B." <bob@other.test>'],
      ['From: Team: alice@pass.test, bob@other.test;'],
      ['From: =?utf-8?q?J=C3=B6rg?= <jorg@pass.test>'],
      ['From: Folded', ' <folded@pass.test>'],
      ['From: one@pass.test', 'Subject: two From fields', 'From: two@other.test'],
      ['Subject: no From at all'],
      ['FROM:   <UPPER@PASS.TEST>  '],
      ['From'],
      ['From:'],
    ];
    for (const lines of froms) {
      for (const eol of ['\r\n', '\n']) {
        const raw = Buffer.from([...lines, 'To: x@example.org', '', 'Body.', ''].join(eol), 'latin1');
        const head = headerFields(raw);
        assert.ok(head);
        const fast = unsignedView(raw, head.end);
        const verified = await dkimVerify(raw, { resolver: async () => [] } as never);
        assert.ok(fast, JSON.stringify(lines));
        assert.deepEqual(fast.headerFrom, verified.headerFrom, JSON.stringify(lines));
        assert.deepEqual(fast.results, verified.results);
        assert.deepEqual(fast.arc, verified.arc);
      }
    }
    // A signature, or any ARC field, needs the verifier itself.
    for (const field of ['DKIM-Signature: v=1; d=pass.test; s=sel', 'ARC-Seal: i=1; a=rsa-sha256', 'arc-authentication-results: i=1; x', 'DKIM-Signature']) {
      const raw = Buffer.from(`${field}\r\nFrom: alice@pass.test\r\n\r\nBody.\r\n`);
      assert.equal(unsignedView(raw, headerFields(raw)!.end), undefined, field);
    }
  });

  it('a deadline already past answers temperror at once, without asking', async () => {
    const asked = dns.queries.length;
    const t = performance.now();
    const auth = await checkMessage(await signed(plainMessage('alice@pass.test', 'x@example.org'), 'pass.test'), client, {
      dns: createAuthDns({ servers: [dns.server] }),
      deadline: performance.now(),
      mta: 'mx.test',
    });
    assert.ok(performance.now() - t < 500);
    assert.deepEqual(auth, { spf: 'temperror', dkim: [{ domain: 'pass.test', selector: 'sel', result: 'temperror' }], dmarc: 'temperror', arc: 'none' });
    assert.equal(dns.queries.length, asked);
  });

  it('answers come from the cache the second time, and "no such name" and failures too', async () => {
    const resolver = createAuthDns({ servers: [dns.server] });
    const once = () => resolver.forMail(performance.now() + 2000).resolve;
    const asked = dns.queries.length;
    assert.deepEqual(await once()('pass.test', 'TXT'), [['v=spf1 ip4:127.0.0.1 -all']]);
    await assert.rejects(once()('missing.test', 'TXT'), { code: 'ENOTFOUND' });
    assert.deepEqual(await once()('PASS.test.', 'TXT'), [['v=spf1 ip4:127.0.0.1 -all']]);
    await assert.rejects(once()('missing.test', 'TXT'), { code: 'ENOTFOUND' });
    assert.equal(dns.queries.length - asked, 2);
    // A name server that fails: temporary, and asked again only after 5 s (RFC 9520).
    dns.failing.add('broken.test');
    const lookups = resolver.forMail(performance.now() + 2000);
    await assert.rejects(lookups.resolve('broken.test', 'TXT'), { code: 'ESERVFAIL' });
    assert.equal(lookups.failedTemporarily, true);
    await assert.rejects(once()('broken.test', 'TXT'), { code: 'ESERVFAIL' });
    assert.equal(dns.queries.filter((q) => q === 'TXT broken.test').length, 1);
    // A name no DNS can hold is never asked for.
    await assert.rejects(once()(`${'a'.repeat(64)}.test`, 'TXT'), { code: 'ENOTFOUND' });
    await assert.rejects(once()('pass.test', 'ANY'), { code: 'ENOTFOUND' });
    assert.equal(dns.queries.length - asked, 3);
  });

  it('a temperror is kept as long as the failed answer it came from, and one from a mail\'s own deadline is not kept', async () => {
    // A name server that fails for one sender's domain: the second mail meets the same
    // cached failure, so its SPF and DMARC results are the kept ones, asked for nothing.
    for (const name of ['down.test', '_dmarc.down.test']) dns.failing.add(name);
    const resolver = createAuthDns({ servers: [dns.server] });
    const downClient = { ...client, sender: 'carol@down.test' };
    const checkDown = () => checkMessage(plainMessage('carol@down.test', 'x@example.org'), downClient, { dns: resolver, deadline: performance.now() + 2000, mta: 'mx.test' });
    const asked = dns.queries.length;
    assert.deepEqual(await checkDown(), { spf: 'temperror', dkim: [], dmarc: 'temperror', arc: 'none' });
    const firstAsked = dns.queries.length - asked;
    assert.ok(firstAsked >= 2, `the first mail asked (${firstAsked} questions)`);
    assert.equal(resolver.recent.size, 2, 'its SPF and DMARC results are kept');
    const keptFor = [...resolver.recent.keys()].map((k) => resolver.recent.getRemainingTTL(k));
    assert.ok(keptFor.every((ms) => ms > 0 && ms <= 5000 + 1000), `kept no longer than the failures (${keptFor.join(', ')} ms)`);
    assert.deepEqual(await checkDown(), { spf: 'temperror', dkim: [], dmarc: 'temperror', arc: 'none' });
    assert.equal(dns.queries.length - asked, firstAsked, 'the second mail asked nothing');

    // A look-up cut short by the mail's own deadline (a silent name server) is nobody else's
    // failure: nothing is kept, and once the name server answers, the next mail passes.
    dns.silent.add('late.test');
    dns.zone.set('late.test', { TXT: ['v=spf1 ip4:127.0.0.1 -all'] });
    const lateClient = { ...client, sender: 'dave@late.test' };
    const late = createAuthDns({ servers: [dns.server] });
    const lookups = late.forMail(performance.now() + 300);
    await assert.rejects(lookups.resolve('late.test', 'TXT'), { code: 'ETIMEOUT' });
    assert.equal(lookups.failedTemporarily, true);
    assert.equal(lookups.failureKeptMs, undefined);
    const first = await checkMessage(plainMessage('dave@late.test', 'x@example.org'), lateClient, { dns: late, deadline: performance.now() + 300, mta: 'mx.test' });
    assert.equal(first.spf, 'temperror');
    assert.equal([...late.recent.keys()].filter((k) => k.startsWith('spf')).length, 0, 'no SPF result kept');
    dns.silent.delete('late.test');
    // The unanswered question may still be in flight in the resolver: a fresh cache asks anew.
    const answered = createAuthDns({ servers: [dns.server] });
    const second = await checkMessage(plainMessage('dave@late.test', 'x@example.org'), lateClient, { dns: answered, deadline: performance.now() + 2000, mta: 'mx.test' });
    assert.equal(second.spf, 'pass');
    // Look-ups that met no failure have nothing to keep a temperror by.
    const fine = answered.forMail(performance.now() + 2000);
    await fine.resolve('pass.test', 'TXT');
    assert.equal(fine.failureKeptMs, undefined);
  });

  it('the verdict stays within its share of the 16 KiB metadata', () => {
    // Ten signatures of ordinary names are all listed.
    const ordinary = verdict({ spf: 'pass', dkim: Array.from({ length: 12 }, (_, i) => dkimEntry(`mail${i}.example-sender.com`, `selector${i}`, 'pass')), dmarc: 'pass', arc: 'none' });
    assert.equal(ordinary.dkim.length, 10);
    assert.ok(authJsonBytes(ordinary) <= MAX_AUTH_JSON_BYTES);
    // Long and hostile names are cleaned and cut, and entries dropped until the verdict fits.
    const longest = verdict({
      spf: 'temperror',
      dkim: Array.from({ length: 20 }, () => dkimEntry('\u0001"d'.repeat(200), '\\s'.repeat(100), 'temperror')),
      dmarc: 'temperror',
      arc: 'temperror',
    });
    assert.ok(longest.dkim.length >= 1 && longest.dkim.length < 10);
    assert.ok(longest.dkim.every((d) => d.domain.length <= MAX_DKIM_DOMAIN_CHARS && d.selector.length <= MAX_DKIM_SELECTOR_CHARS && /^[\x21-\x7e]*$/.test(d.domain + d.selector) && !/["\\]/.test(d.domain + d.selector)));
    assert.ok(authJsonBytes(longest) <= MAX_AUTH_JSON_BYTES);
    // The parse leaves that much room: a metadata full of links and the longest verdict fit in 16 KiB together.
    const full = buildMetadata(
      { headers: [], attachments: [], subject: 's', text: Array.from({ length: 60 }, (_, i) => `https://example.com/${'x'.repeat(400)}${i}`).join('\n') } as never,
      0,
    );
    assert.ok(full.links.length > 0);
    assert.ok(Buffer.byteLength(JSON.stringify({ ...full, size: 10 * 1024 * 1024, auth: longest })) <= MAX_METADATA_BYTES);
  });
});
