// Blocks at SMTP (docs/decisions.md "Blocks"): over real SMTP, MAIL FROM from a blocked
// sender, a sender of a blocked domain (or a subdomain of it) or a blocked client IP
// (or range) is answered exactly "550 5.7.1", nothing is stored, and everything else is
// accepted and stored as before; once the block is removed the same mail is accepted.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createAddress, message, request, SmtpClient, startTestServer, type TestServer } from '../helpers/harness.js';
import { ADMIN_AUTH as auth, ADMIN_TOKEN } from '../helpers/admin.js';
const METRICS_TOKEN = 'metrics-token-for-admin-blocks';

describe('admin blocks at SMTP', () => {
  let server: TestServer;
  let inbox: { address: string; jwt: string };
  let sent = 0;

  before(async () => {
    server = await startTestServer({ ADMIN_TOKEN, METRICS_TOKEN });
    inbox = await createAddress(server, { name: 'blocks-inbox' });
  });
  after(() => server.close());

  const block = async (kind: string, value: string): Promise<number> => {
    const res = await request(server.httpUrl, '/api/admin/blocks', { headers: auth, body: { kind, value } });
    assert.equal(res.status, 200, res.text);
    return res.json.id as number;
  };
  const unblock = async (id: number) => assert.equal((await request(server.httpUrl, `/api/admin/blocks/${id}`, { method: 'DELETE', headers: auth })).status, 200);
  const stored = async () => (await request(server.httpUrl, '/api/mails?limit=1&offset=0', { jwt: inbox.jwt })).json.count as number;

  /**
   * One transaction from `from` (the client's address) with MAIL FROM:<sender>: the MAIL FROM
   * reply, and when it was 250, the reply at the end of DATA (which must be 250) and that the
   * mail is then listed.
   */
  async function send(sender: string, from = '127.0.0.1'): Promise<string> {
    const smtp = await SmtpClient.connect(server.smtpPort, '127.0.0.1', from);
    try {
      assert.equal((await smtp.command('EHLO client.test')).code, 250);
      const mailFrom = await smtp.command(`MAIL FROM:<${sender}>`);
      if (mailFrom.code !== 250) {
        // Nothing of the transaction goes on after the refusal.
        assert.equal((await smtp.command(`RCPT TO:<${inbox.address}>`)).code, 503);
        return mailFrom.text.trim();
      }
      const before = await stored();
      assert.equal((await smtp.command(`RCPT TO:<${inbox.address}>`)).code, 250);
      assert.equal((await smtp.command('DATA')).code, 354);
      const end = await smtp.data(message({ Subject: `mail ${++sent}` }, 'x'));
      assert.equal(end.code, 250, end.text);
      assert.equal(await stored(), before + 1, 'the mail is stored');
      return mailFrom.text.trim();
    } finally {
      await smtp.quit();
    }
  }
  const refused = (reply: string, what: string) => assert.match(reply, /^550 5\.7\.1 [^\r\n]+$/, `${what}: ${reply}`);
  const accepted = (reply: string, what: string) => assert.match(reply, /^250 /, `${what}: ${reply}`);

  it('refuses a blocked sender with 550 5.7.1 (whatever its case), accepts its neighbours, and accepts it again once unblocked', async () => {
    const id = await block('sender', 'Bad.Sender@Spam.Example');
    const count = await stored();
    refused(await send('bad.sender@spam.example'), 'the sender');
    refused(await send('BAD.SENDER@SPAM.EXAMPLE'), 'in capitals');
    assert.equal(await stored(), count, 'nothing stored');
    accepted(await send('good.sender@spam.example'), 'another sender of the domain');
    accepted(await send('bad.sender@spam.example.org'), 'the same name elsewhere');
    accepted(await send(''), 'the null sender');
    await unblock(id);
    accepted(await send('bad.sender@spam.example'), 'unblocked');
  });

  it('refuses every sender of a blocked domain and of its subdomains, not of look-alikes', async () => {
    const id = await block('domain', 'spam.example');
    refused(await send('anyone@spam.example'), 'the domain');
    refused(await send('anyone@mx.eu.spam.example'), 'a subdomain');
    refused(await send('Anyone@SPAM.example'), 'in capitals');
    accepted(await send('anyone@notspam.example'), 'a name ending the same');
    accepted(await send('anyone@spam.example.org'), 'a longer domain');
    accepted(await send('spam.example@elsewhere.example'), 'the domain as a local part');
    await unblock(id);
    accepted(await send('anyone@spam.example'), 'unblocked');
  });

  it('refuses a blocked client IP and the clients of a blocked range, for any sender (the null sender too)', async () => {
    const single = await block('ip', '127.0.0.2');
    refused(await send('someone@fine.example', '127.0.0.2'), 'the IP');
    refused(await send('', '127.0.0.2'), 'the IP, null sender');
    accepted(await send('someone@fine.example', '127.0.0.3'), 'its neighbour');
    accepted(await send('someone@fine.example'), '127.0.0.1');
    const range = await block('ip', '127.0.0.4/30');
    for (const ip of ['127.0.0.4', '127.0.0.5', '127.0.0.7']) refused(await send('someone@fine.example', ip), `${ip} in 127.0.0.4/30`);
    accepted(await send('someone@fine.example', '127.0.0.8'), '127.0.0.8, past the range');
    await unblock(single);
    await unblock(range);
    accepted(await send('someone@fine.example', '127.0.0.2'), 'unblocked IP');
    accepted(await send('someone@fine.example', '127.0.0.5'), 'unblocked range');
  });

  it('lets a session go on after a refused sender, and counts the refusals by kind', async () => {
    const id = await block('sender', 'one@bad.example');
    const smtp = await SmtpClient.connect(server.smtpPort);
    try {
      await smtp.command('EHLO client.test');
      refused((await smtp.command('MAIL FROM:<one@bad.example>')).text.trim(), 'first');
      assert.equal((await smtp.command('MAIL FROM:<two@bad.example>')).code, 250, 'another sender in the same session');
    } finally {
      await smtp.quit();
      await unblock(id);
    }
    const metrics = await request(server.httpUrl, '/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    const count = (kind: string) => Number(new RegExp(`^temp_inbox_smtp_senders_blocked_total\\{kind="${kind}"\\} (\\d+)$`, 'm').exec(metrics.text)?.[1]);
    assert.deepEqual([count('sender'), count('domain'), count('ip')], [3, 3, 5]);
  });
});

describe('admin blocks: the cap', () => {
  it('holds at most 10,000 blocks: the 10,001st is 409 with a sentence, and one removed makes room', { timeout: 120_000 }, async () => {
    const server = await startTestServer({ ADMIN_TOKEN });
    try {
      // 9,999 straight into the store (10,000 HTTP requests would only be slower), the 10,000th through the API.
      for (let i = 0; i < 9_999; i++) await server.store.addBlock({ kind: 'sender', value: `s${i}@cap.example`, note: '', createdAt: Date.now() });
      const add = (value: string) => request(server.httpUrl, '/api/admin/blocks', { headers: auth, body: { kind: 'sender', value } });
      const last = await add('last@cap.example');
      assert.equal(last.status, 200, last.text);
      const over = await add('over@cap.example');
      assert.equal(over.status, 409);
      assert.match(over.headers.get('content-type') ?? '', /^text\/plain/);
      assert.equal(over.text, 'There are 10000 blocks already; remove some first.');
      assert.equal((await request(server.httpUrl, `/api/admin/blocks/${last.json.id}`, { method: 'DELETE', headers: auth })).status, 200);
      assert.equal((await add('over@cap.example')).status, 200, 'room again after one was removed');
    } finally {
      await server.close();
    }
  });
});
