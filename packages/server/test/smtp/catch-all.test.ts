// Plus-addressing (PLUS_ADDRESSING, on by default) and the catch-all (CATCH_ALL) over
// real SMTP: name+tag@domain reaches name@domain and the mail keeps the address it
// was sent to; with the catch-all, mail to any allowed name creates that address when
// the mail is stored (RCPT alone creates nothing), and the first POST /api/new_address
// for the name receives its token.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createAddress, DOMAIN, message, METRICS_TOKEN, pushOpen, request, sendMail, serversStoppedAfter, SmtpClient, untilPushOpen } from '../helpers/harness.js';

const start = serversStoppedAfter();

/** The reply to RCPT TO for `to` (after EHLO and MAIL FROM). */
async function rcpt(port: number, to: string): Promise<string> {
  const smtp = await SmtpClient.connect(port);
  try {
    await smtp.script([
      ['EHLO client.test', 250],
      ['MAIL FROM:<sender@example.com>', 250],
    ]);
    return (await smtp.command(`RCPT TO:<${to}>`)).text.trim();
  } finally {
    await smtp.quit();
  }
}

const list = async (httpUrl: string, jwt: string) => (await request(httpUrl, '/api/mails?limit=10&offset=0', { jwt })).json as { count: number; results: { metadata: string; uuid: string }[] };

describe('plus-addressing', () => {
  it('name+tag@domain is delivered to name@domain; the mail keeps the address it was sent to', async () => {
    const server = await start();
    const { address, jwt } = await createAddress(server, { name: 'alice' });
    assert.equal(address, `alice@${DOMAIN}`);
    await sendMail(server.smtpPort, { to: [`Alice+News@${DOMAIN}`], message: message({ Subject: 'tagged', To: `alice+news@${DOMAIN}` }, 'hello') });
    const { count, results } = await list(server.httpUrl, jwt);
    assert.equal(count, 1);
    assert.equal(JSON.parse(results[0]!.metadata).delivered_to, `alice+news@${DOMAIN}`);
    const raw = (await request(server.httpUrl, `/api/mail/${results[0]!.uuid}`, { jwt })).json.raw as string;
    assert.match(raw, new RegExp(`^Received: [^]*?for <alice\\+news@${DOMAIN.replace(/\./g, '\\.')}>;`));
  });

  it('the wait and event to filter match the tag even when no To: header names it (Bcc)', async () => {
    const server = await start({ METRICS_TOKEN });
    const { jwt } = await createAddress(server, { name: 'bcc' });
    const wait = request(server.httpUrl, '/api/mails/wait?since=0&timeout=10&to=%2Bsignup', { jwt });
    // Held open by the server before any mail is sent; the other tag's mail does not answer it.
    await untilPushOpen(server, { wait: 1 });
    await sendMail(server.smtpPort, { to: [`bcc+other@${DOMAIN}`], message: message({ Subject: 'other tag', To: 'list@example.org' }, 'x') });
    assert.equal((await pushOpen(server)).wait, 1, 'the other tag did not answer the wait');
    await sendMail(server.smtpPort, { to: [`bcc+signup@${DOMAIN}`], message: message({ Subject: 'signup tag', To: 'list@example.org' }, 'x') });
    const answered = await wait;
    assert.equal(answered.status, 200);
    assert.deepEqual(
      (answered.json.results as { metadata: string }[]).map((m) => JSON.parse(m.metadata).subject),
      ['signup tag'],
    );
  });

  it('a bare +tag, and any tag when PLUS_ADDRESSING=false, is an unknown recipient: 550 5.1.1', async () => {
    const server = await start();
    await createAddress(server, { name: 'bob' });
    assert.match(await rcpt(server.smtpPort, `+tag@${DOMAIN}`), /^550 5\.1\.1 /);
    const strict = await start({ PLUS_ADDRESSING: 'false' });
    await createAddress(strict, { name: 'bob' });
    assert.match(await rcpt(strict.smtpPort, `bob+tag@${DOMAIN}`), /^550 5\.1\.1 /);
    assert.match(await rcpt(strict.smtpPort, `bob@${DOMAIN}`), /^250 /);
  });
});

describe('catch-all', () => {
  it('off (the default): a name nobody created is refused with 550 5.1.1', async () => {
    const server = await start();
    assert.match(await rcpt(server.smtpPort, `nobody@${DOMAIN}`), /^550 5\.1\.1 /);
  });

  it('on: the first mail creates the address; the first to claim the name gets its token and the mail, the second gets 409', async () => {
    const server = await start({ CATCH_ALL: 'true' });
    await sendMail(server.smtpPort, { to: [`fresh+welcome@${DOMAIN}`], message: message({ Subject: 'before anyone asked' }, 'code 481516') });
    const claimed = await request(server.httpUrl, '/api/new_address', { method: 'POST', body: { name: 'fresh' } });
    assert.equal(claimed.status, 200, claimed.text);
    assert.equal(claimed.json.address, `fresh@${DOMAIN}`);
    const { count, results } = await list(server.httpUrl, claimed.json.jwt as string);
    assert.equal(count, 1);
    assert.equal(JSON.parse(results[0]!.metadata).subject, 'before anyone asked');
    const again = await request(server.httpUrl, '/api/new_address', { method: 'POST', body: { name: 'fresh' } });
    assert.equal(again.status, 409);
    assert.equal(again.headers.get('content-type'), 'text/plain; charset=utf-8');
  });

  it('on: an address created by its owner is never handed to another', async () => {
    const server = await start({ CATCH_ALL: 'true' });
    await createAddress(server, { name: 'owned' });
    const taken = await request(server.httpUrl, '/api/new_address', { method: 'POST', body: { name: 'owned' } });
    assert.equal(taken.status, 409);
  });

  it('on: reserved and malformed names are still refused at RCPT, and create nothing', async () => {
    const server = await start({ CATCH_ALL: 'true' });
    for (const name of ['postmaster', 'post.master', '-dash', 'trailing_', 'x'.repeat(65)]) {
      const reply = await rcpt(server.smtpPort, `${name}@${DOMAIN}`);
      assert.match(reply, /^550 5\.1\.1 /, `${name}: ${reply}`);
    }
    assert.match(await rcpt(server.smtpPort, `someone@elsewhere.example`), /^550 5\.1\.1 /);
    assert.equal(await server.store.findAddress(`postmaster@${DOMAIN}`), undefined);
  });

  it('on: RCPT alone creates nothing (250 all the same); the address is created when its mail is stored', async () => {
    const server = await start({ CATCH_ALL: 'true' });
    for (let i = 0; i < 20; i++) assert.match(await rcpt(server.smtpPort, `probe${i}@${DOMAIN}`), /^250 /);
    for (let i = 0; i < 20; i++) assert.equal(await server.store.findAddress(`probe${i}@${DOMAIN}`), undefined, `probe${i} was not created`);
    await sendMail(server.smtpPort, { to: [`probe3@${DOMAIN}`, `probe3+tag@${DOMAIN}`], message: message({ Subject: 'stored' }, 'x') });
    assert.ok(await server.store.findAddress(`probe3@${DOMAIN}`), 'created with its mail');
    const claimed = await request(server.httpUrl, '/api/new_address', { method: 'POST', body: { name: 'probe3' } });
    assert.equal(claimed.status, 200);
    assert.equal((await list(server.httpUrl, claimed.json.jwt as string)).count, 1, 'one copy for the two spellings of one address');
  });

  it('on: SMTP_RATE_NEW_ADDRESSES bounds the new names one client may send to (452 4.7.0); existing addresses are not counted', async () => {
    const server = await start({ CATCH_ALL: 'true', SMTP_RATE_NEW_ADDRESSES: '3/60' });
    const { address } = await createAddress(server, { name: 'existing' });
    const smtp = await SmtpClient.connect(server.smtpPort);
    try {
      await smtp.script([
        ['EHLO client.test', 250],
        ['MAIL FROM:<sender@example.com>', 250],
      ]);
      for (let i = 0; i < 3; i++) assert.equal((await smtp.command(`RCPT TO:<new${i}@${DOMAIN}>`)).code, 250);
      assert.match((await smtp.command(`RCPT TO:<new3@${DOMAIN}>`)).text, /^452 4\.7\.0 Too many new addresses from your address; try again in \d+ seconds/);
      assert.equal((await smtp.command(`RCPT TO:<${address}>`)).code, 250, 'an address that exists is not a new one');
      assert.equal((await smtp.command('DATA')).code, 354);
      assert.equal((await smtp.data(message({ Subject: 'to three new and one existing' }, 'x'))).code, 250);
    } finally {
      await smtp.quit();
    }
    for (let i = 0; i < 3; i++) assert.ok(await server.store.findAddress(`new${i}@${DOMAIN}`));
    assert.equal(await server.store.findAddress(`new3@${DOMAIN}`), undefined);
  });

  it('on: two first mails at once to a new name make one address with both mails', async () => {
    const server = await start({ CATCH_ALL: 'true' });
    await Promise.all([1, 2].map((i) => sendMail(server.smtpPort, { to: [`twice@${DOMAIN}`], message: message({ Subject: `first ${i}` }, 'x') })));
    const claimed = await request(server.httpUrl, '/api/new_address', { method: 'POST', body: { name: 'twice' } });
    assert.equal(claimed.status, 200);
    assert.equal((await list(server.httpUrl, claimed.json.jwt as string)).count, 2);
  });
});
