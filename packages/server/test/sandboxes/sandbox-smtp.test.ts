// Sandboxes over SMTP (docs/decisions.md "Sandboxes"): real sessions with nodemailer as the
// client, AUTH PLAIN and LOGIN, the sink (any recipient, stored once with its envelope,
// Bcc-only recipients included), isolation between sandboxes, wrong credentials, the
// lock-out, AUTH refused without TLS off loopback, and per-sandbox chaos. Without any
// sandbox nothing changes: EHLO offers no AUTH.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { networkInterfaces } from 'node:os';
import type { Socket } from 'node:net';
import nodemailer from 'nodemailer';
import { client, METRICS_TOKEN, request, serversStoppedAfter, SmtpClient, type TestServer } from '../helpers/harness.js';

const start = serversStoppedAfter();

const transport = (server: TestServer, user: string, pass: string, extra: Record<string, unknown> = {}) =>
  nodemailer.createTransport({ host: '127.0.0.1', port: server.smtpPort, secure: false, auth: { user, pass }, ...extra });

/** The SMTP error nodemailer rejected with: its reply code and text. */
async function refused(send: Promise<unknown>): Promise<{ code: number; response: string }> {
  try {
    await send;
  } catch (err) {
    const e = err as { responseCode?: number; response?: string };
    return { code: e.responseCode ?? 0, response: e.response ?? String(err) };
  }
  throw new Error('the send was not refused');
}

async function tokenOf(server: TestServer, name: string, password: string): Promise<string> {
  const res = await request(server.httpUrl, '/api/sandbox/token', { method: 'POST', body: { name, password } });
  assert.equal(res.status, 200, res.text);
  return (res.json as { jwt: string }).jwt;
}

async function mailsOf(server: TestServer, jwt: string) {
  const res = await client(server)('/api/mails?limit=50&offset=0', { jwt });
  assert.equal(res.status, 200, res.text);
  return res.json as { count: number; results: { uuid: string; address: string; source: string; metadata: string; recipients?: string[] }[] };
}

describe('without any sandbox', () => {
  it('EHLO offers no AUTH and AUTH is an unknown command, exactly as before', async () => {
    const server = await start();
    const smtp = await SmtpClient.connect(server.smtpPort);
    const ehlo = await smtp.command('EHLO client.test');
    assert.equal(ehlo.code, 250);
    assert.doesNotMatch(ehlo.text, /AUTH/);
    const auth = await smtp.command('AUTH PLAIN AGEAYg==');
    assert.equal(auth.code, 500, auth.text);
    await smtp.quit();
  });
});

describe('SMTP AUTH in sink mode', () => {
  let server: TestServer;
  before(async () => {
    server = await start({ SANDBOXES: 'team-a:secret-a team-b:secret-b', METRICS_TOKEN });
  });

  it('offers AUTH PLAIN LOGIN on EHLO once a sandbox exists', async () => {
    const smtp = await SmtpClient.connect(server.smtpPort);
    const ehlo = await smtp.command('EHLO client.test');
    assert.match(ehlo.text, /250[- ]AUTH PLAIN LOGIN/);
    await smtp.quit();
  });

  for (const method of ['PLAIN', 'LOGIN'] as const) {
    it(`AUTH ${method} on loopback: any recipient, stored once with the whole envelope (To, Cc and a Bcc-only recipient), never relayed`, async () => {
      const subject = `sink ${method} ${Date.now()}`;
      const info = await transport(server, 'team-a', 'secret-a', { authMethod: method }).sendMail({
        from: 'app@staging.example',
        to: 'alice@customer.com',
        cc: 'carol@partner.example',
        bcc: 'hidden@audit.example',
        subject,
        text: 'Your code is 482913',
      });
      assert.match(info.response, /^250 /);
      const jwt = await tokenOf(server, 'team-a', 'secret-a');
      const mine = (await mailsOf(server, jwt)).results.filter((m) => (JSON.parse(m.metadata) as { subject: string }).subject === subject);
      assert.equal(mine.length, 1, 'one mail for three recipients');
      const m = mine[0]!;
      assert.equal(m.address, 'team-a@sandbox.invalid');
      assert.equal(m.source, 'app@staging.example');
      assert.deepEqual(m.recipients, ['alice@customer.com', 'carol@partner.example', 'hidden@audit.example']);
      // The full mail has the same field, and the Bcc recipient is nowhere in the message itself.
      const full = await client(server)(`/api/mail/${m.uuid}`, { jwt });
      assert.equal(full.status, 200);
      assert.deepEqual((full.json as { recipients: string[] }).recipients, m.recipients);
      assert.doesNotMatch((full.json as { raw: string }).raw, /hidden@audit/);
      // Nothing reached an address of the pool: the recipients' names exist nowhere else.
      assert.equal(await server.store.findAddress('alice@customer.com'), undefined);
    });
  }

  it('keeps each sandbox to its own mail: another sandbox neither lists nor opens it (404)', async () => {
    await transport(server, 'team-a', 'secret-a').sendMail({ from: 'a@x.example', to: 'only-a@x.example', subject: 'for a', text: 'a' });
    await transport(server, 'team-b', 'secret-b').sendMail({ from: 'b@x.example', to: 'only-b@x.example', subject: 'for b', text: 'b' });
    const a = await tokenOf(server, 'team-a', 'secret-a');
    const b = await tokenOf(server, 'team-b', 'secret-b');
    const listA = await mailsOf(server, a);
    const listB = await mailsOf(server, b);
    assert.ok(listA.results.every((m) => m.address === 'team-a@sandbox.invalid'));
    assert.deepEqual(
      listB.results.map((m) => m.recipients),
      [['only-b@x.example']],
    );
    const foreign = listA.results[0]!.uuid;
    assert.equal((await client(server)(`/api/mail/${foreign}`, { jwt: b })).status, 404);
  });

  it('wrong credentials: 535 5.7.8, and an unknown name the same', async () => {
    const wrong = await refused(transport(server, 'team-a', 'nope').sendMail({ from: 'a@x.example', to: 'x@y.example', text: 'x' }));
    assert.equal(wrong.code, 535);
    assert.match(wrong.response, /^535 5\.7\.8 /);
    const unknown = await refused(transport(server, 'nobody', 'secret-a').sendMail({ from: 'a@x.example', to: 'x@y.example', text: 'x' }));
    assert.match(unknown.response, /^535 5\.7\.8 /);
  });

  it('an unauthenticated session behaves as before: a recipient outside the pool is 550', async () => {
    const smtp = await SmtpClient.connect(server.smtpPort);
    await smtp.script([
      ['EHLO client.test', 250],
      ['MAIL FROM:<a@x.example>', 250],
    ]);
    const rcpt = await smtp.command('RCPT TO:<alice@customer.com>');
    assert.equal(rcpt.code, 550);
    // Nor can it reach a sandbox's own address.
    assert.equal((await smtp.command('RCPT TO:<team-a@sandbox.invalid>')).code, 550);
    await smtp.quit();
  });

  it('counts logins in the metrics', async () => {
    const res = await request(server.httpUrl, '/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    assert.match(res.text, /temp_inbox_smtp_auth_total\{outcome="ok"\} [1-9]/);
    assert.match(res.text, /temp_inbox_smtp_auth_total\{outcome="wrong"\} [1-9]/);
  });
});

describe('lock-out', () => {
  // The first two cases share a server: sandboxes of their own, and clients of their own
  // (127.0.0.1 and 127.0.0.2; 127.0.0.6), the lock-out being per client.
  let perClient: Promise<TestServer> | undefined;
  const perClientServer = () => (perClient ??= start({ SANDBOXES: 'locked:right-one burst:right-one', SANDBOX_LOGIN_FAILURES: '3/600', SANDBOX_LOGIN_FAILURES_PER_NAME: '0', METRICS_TOKEN }));

  it('after N wrong guesses from a client, its next login is 421 (even with the right password) and POST /api/sandbox/token is 429; another client is not locked', async () => {
    const server = await perClientServer();
    const guess = (pass: string, localAddress = '127.0.0.1') =>
      refused(transport(server, 'locked', pass, { localAddress }).sendMail({ from: 'a@x.example', to: 'x@y.example', text: 'x' }));
    for (let i = 0; i < 3; i++) assert.match((await guess(`wrong-${i}`)).response, /^535 5\.7\.8 /);
    const locked = await guess('right-one');
    assert.equal(locked.code, 421, locked.response);
    const http = await request(server.httpUrl, '/api/sandbox/token', { method: 'POST', body: { name: 'locked', password: 'right-one' } });
    assert.equal(http.status, 429);
    assert.ok(Number(http.headers.get('retry-after')) > 0);
    // Another client (127.0.0.2) still logs in.
    const ok = await transport(server, 'locked', 'right-one', { localAddress: '127.0.0.2' }).sendMail({ from: 'a@x.example', to: 'x@y.example', text: 'x' });
    assert.match(ok.response, /^250 /);
    const metrics = await request(server.httpUrl, '/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    assert.match(metrics.text, /temp_inbox_smtp_auth_total\{outcome="locked"\} 1/);
  });

  it('guesses sent at once cannot overshoot the limit: each is counted before its slow hash', async () => {
    const server = await perClientServer();
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => request(server.httpUrl, '/api/sandbox/token', { method: 'POST', body: { name: 'burst', password: `guess-${i}` }, localAddress: '127.0.0.6' })),
    );
    const statuses = answers.map((r) => r.status).sort();
    assert.deepEqual(statuses, [401, 401, 401, ...Array<number>(9).fill(429)]);
  });

  it('per login: guesses from many clients lock the name, whatever the client', async () => {
    const server = await start({ SANDBOXES: 'named:right-one', SANDBOX_LOGIN_FAILURES: '0', SANDBOX_LOGIN_FAILURES_PER_NAME: '2/600' });
    for (const ip of ['127.0.0.3', '127.0.0.4']) {
      const r = await refused(transport(server, 'named', 'bad', { localAddress: ip }).sendMail({ from: 'a@x.example', to: 'x@y.example', text: 'x' }));
      assert.equal(r.code, 535);
    }
    const r = await refused(transport(server, 'named', 'right-one', { localAddress: '127.0.0.5' }).sendMail({ from: 'a@x.example', to: 'x@y.example', text: 'x' }));
    assert.equal(r.code, 421, r.response);
  });
});

/** An IPv4 address of this machine that is not loopback, to connect from "another host". */
const outside = Object.values(networkInterfaces())
  .flat()
  .find((i) => i && i.family === 'IPv4' && !i.internal)?.address;

describe('AUTH without TLS off loopback', { skip: outside ? false : 'no non-loopback IPv4 address on this machine' }, () => {
  it('is refused with 538 5.7.11 before any credentials are sent, and allowed with SMTP_AUTH_ALLOW_INSECURE=true', async () => {
    const strict = await start({ SANDBOXES: 'remote:pw-remote', SMTP_HOST: '0.0.0.0' });
    const smtp = await SmtpClient.connect(strict.smtpPort, outside);
    await smtp.command('EHLO client.test');
    const auth = await smtp.command('AUTH LOGIN');
    assert.equal(auth.code, 538, auth.text);
    assert.match(auth.text, /^538 5\.7\.11 /);
    await smtp.quit();
    const viaNodemailer = await refused(
      nodemailer.createTransport({ host: outside, port: strict.smtpPort, secure: false, auth: { user: 'remote', pass: 'pw-remote' } }).sendMail({ from: 'a@x.example', to: 'x@y.example', text: 'x' }),
    );
    assert.equal(viaNodemailer.code, 538);

    const open = await start({ SANDBOXES: 'remote:pw-remote', SMTP_HOST: '0.0.0.0', SMTP_AUTH_ALLOW_INSECURE: 'true' });
    const info = await nodemailer
      .createTransport({ host: outside, port: open.smtpPort, secure: false, auth: { user: 'remote', pass: 'pw-remote' } })
      .sendMail({ from: 'a@x.example', to: 'x@y.example', text: 'x' });
    assert.match(info.response, /^250 /);
  });
});

describe('chaos per sandbox', () => {
  let server: TestServer;
  before(async () => {
    server = await start({ SANDBOXES: 'chaotic:pw-c calm:pw-d gone:pw-g' });
  });
  after(() => undefined);

  const setChaos = async (jwt: string, chaos: unknown) => {
    const res = await client(server)('/api/sandbox/chaos', { method: 'PUT', jwt, body: chaos });
    return res;
  };

  it('faults at MAIL FROM, RCPT TO, DATA and AUTH reach only the sandbox they are set on', async () => {
    const chaotic = await tokenOf(server, 'chaotic', 'pw-c');
    const send = (user: string, pass: string) => transport(server, user, pass).sendMail({ from: 'a@x.example', to: 'x@y.example', subject: 'chaos', text: 'x' });

    assert.equal((await setChaos(chaotic, { sender: { errorCode: 451, probability: 100 } })).status, 200);
    assert.match((await refused(send('chaotic', 'pw-c'))).response, /^451 4\.0\.0 /);
    assert.match((await send('calm', 'pw-d')).response, /^250 /, 'the other sandbox delivers normally');

    await setChaos(chaotic, { recipient: { errorCode: 550, probability: 100 } });
    assert.match((await refused(send('chaotic', 'pw-c'))).response, /^550 5\.0\.0 /);
    await setChaos(chaotic, { data: { errorCode: 452, probability: 100 } });
    assert.match((await refused(send('chaotic', 'pw-c'))).response, /^452 4\.0\.0 /);
    await setChaos(chaotic, { authentication: { errorCode: 454, probability: 100 } });
    assert.match((await refused(send('chaotic', 'pw-c'))).response, /^454 4\.0\.0 /);
    assert.match((await send('calm', 'pw-d')).response, /^250 /);

    // A disconnect: the connection goes without a reply.
    await setChaos(chaotic, { disconnectProbability: 100 });
    const dropped = await refused(send('chaotic', 'pw-c'));
    assert.doesNotMatch(dropped.response, /^250/);

    // A delay: the reply comes no sooner than it.
    await setChaos(chaotic, { delayMs: 300 });
    const t0 = performance.now();
    assert.match((await send('chaotic', 'pw-c')).response, /^250 /);
    assert.ok(performance.now() - t0 >= 300 * 3, 'AUTH, MAIL, RCPT and DATA each waited');

    // Cleared: mail flows again, and none of the faulted attempts was stored.
    const cleared = await setChaos(chaotic, {});
    assert.deepEqual(cleared.json, {});
    assert.match((await send('chaotic', 'pw-c')).response, /^250 /);
    assert.equal((await mailsOf(server, chaotic)).count, 2);
  });

  it('a delayed DATA step does not store the message once its client has closed the connection', async () => {
    const gone = await tokenOf(server, 'gone', 'pw-g');
    assert.equal((await setChaos(gone, { delayMs: 300 })).status, 200);
    const smtp = await SmtpClient.connect(server.smtpPort);
    await smtp.script([
      ['EHLO client.test', 250],
      [`AUTH PLAIN ${Buffer.from('\0gone\0pw-g').toString('base64')}`, 235],
      ['MAIL FROM:<a@x.example>', 250],
      ['RCPT TO:<x@y.example>', 250],
      ['DATA', 354],
    ]);
    // The whole message, then the client goes while the DATA reply is still held back.
    smtp.write('Subject: abandoned\r\n\r\nx\r\n.\r\n');
    (smtp as unknown as { socket: Socket }).socket.destroy();
    // A second mail of the same sandbox: each of its steps waits the same delay, so its 250
    // comes well after the first message's delayed step would have run.
    assert.match((await transport(server, 'gone', 'pw-g').sendMail({ from: 'a@x.example', to: 'x@y.example', subject: 'kept', text: 'x' })).response, /^250 /);
    const mails = await mailsOf(server, gone);
    assert.equal(mails.count, 1, 'only the mail whose client stayed was stored');
  });

  it('bad chaos settings are a plain-text 400 naming the field', async () => {
    const jwt = await tokenOf(server, 'calm', 'pw-d');
    for (const [body, words] of [
      [{ sender: { errorCode: 250, probability: 50 } }, /errorCode/],
      [{ sender: { errorCode: 451, probability: 101 } }, /probability/],
      [{ delayMs: 999_999 }, /delayMs/],
      [{ nonsense: true }, /Unknown chaos setting/],
      [[1, 2], /object/],
    ] as const) {
      const res = await setChaos(jwt, body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.match(res.headers.get('content-type') ?? '', /text\/plain/);
      assert.match(res.text, words);
    }
  });
});

describe('AUTH PLAIN authorization identity', () => {
  it('an authzid other than the login is 535 before any hash; the login itself or none logs in', async () => {
    const server = await start({ SANDBOXES: 'team-a:secret-a team-b:secret-b' });
    const plain = (authzid: string, authcid: string, password: string) => Buffer.from(`${authzid}\0${authcid}\0${password}`).toString('base64');
    for (const [authzid, code] of [['team-b', 535], ['TEAM-A', 235], ['', 235]] as const) {
      const smtp = await SmtpClient.connect(server.smtpPort);
      assert.equal((await smtp.command('EHLO client.test')).code, 250);
      const auth = await smtp.command(`AUTH PLAIN ${plain(authzid, 'team-a', 'secret-a')}`);
      assert.equal(auth.code, code, `authzid "${authzid}": ${auth.text}`);
      if (code === 535) assert.match(auth.text, /5\.7\.8/);
      await smtp.quit();
    }
  });
});
