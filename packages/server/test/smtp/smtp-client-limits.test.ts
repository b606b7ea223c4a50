// What a few SMTP clients can hold of what everyone shares (docs/security.md "SMTP"):
// each client's share of the in-flight budget, the slowest DATA transfer kept, the
// operator's trusted networks, the bytes per client and day, and the disk's free space.
// Distinct clients are distinct loopback source addresses (127.0.0.2, 127.0.0.3, ...),
// so every case that counts per client narrows SMTP_TRUSTED_NETWORKS (all of 127/8 by default).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SQLITE_FILE } from '../../src/storage/index.js';
import { client, createAddress, mailCount, openData, SmtpClient, serversStoppedAfter, startTestServer } from '../helpers/harness.js';
import { REDIS_URL, skipUnless } from '../helpers/services.js';

const start = serversStoppedAfter();
const redisSkip = skipUnless('redis');

/** Repeats MAIL FROM (with RSET between) from one session until its reply matches, or gives the last reply. */
async function mailFromUntil(smtp: SmtpClient, want: RegExp, tries = 100): Promise<string> {
  let r = await smtp.command('MAIL FROM:<s@example.org>');
  for (let i = 0; i < tries && !want.test(r.text); i++) {
    await smtp.command('RSET');
    await new Promise((res) => setTimeout(res, 50));
    r = await smtp.command('MAIL FROM:<s@example.org>');
  }
  return r.text;
}

/** The first line a connection from `from` is answered with: the greeting, or a refusal. */
async function firstLine(port: number, from: string): Promise<string> {
  const socket = connect({ port, host: '127.0.0.1', localAddress: from });
  socket.setEncoding('latin1');
  socket.on('error', () => undefined);
  try {
    return await new Promise<string>((resolve, reject) => {
      let buf = '';
      socket.on('data', (d: string) => {
        buf += d;
        if (buf.includes('\r\n')) resolve(buf.slice(0, buf.indexOf('\r\n')));
      });
      socket.once('close', () => reject(new Error(`closed before a reply: ${JSON.stringify(buf)}`)));
    });
  } finally {
    socket.destroy();
  }
}


describe('smtp: a client holds at most its share of the in-flight budget', () => {
  it('two clients holding ten unfinished messages each leave room: a third client gets 250', async () => {
    // 1 MiB per client of 2.5 MiB in all: the two fill their shares (2 MiB) and no more.
    const server = await start({
      MAX_MESSAGE_BYTES: '1048576',
      SMTP_INFLIGHT_BYTES: String(2.5 * 1048576),
      SMTP_CLIENT_INFLIGHT_BYTES: '1048576',
      SMTP_TRUSTED_NETWORKS: '',
      // Ten holders and a probe from each.
      SMTP_MAX_CLIENTS_PER_IP: '11',
      SMTP_DATA_MIN_RATE: '0',
    });
    const { address, jwt } = await createAddress(server);
    const held: SmtpClient[] = [];
    for (const hostile of ['127.0.0.2', '127.0.0.3']) {
      // Ten connections of 250,000 bytes each, never finished: 2.5 MB a client, the whole budget for two.
      for (let i = 0; i < 10; i++) {
        const smtp = await SmtpClient.connect(server.smtpPort, '127.0.0.1', hostile);
        held.push(smtp);
        await smtp.command('EHLO hostile.test');
        // Once its share is nearly full, its next transactions are deferred at MAIL FROM.
        const mailFrom = await smtp.command('MAIL FROM:<s@example.org>');
        if (mailFrom.code !== 250) {
          assert.match(mailFrom.text, /^452 4\.7\.0 /);
          continue;
        }
        await smtp.script([
          [`RCPT TO:<${address}>`, 250],
          ['DATA', 354],
        ]);
        smtp.write(`Subject: held\r\n\r\n${'h'.repeat(250_000)}`);
      }
      // Once the client's share is nearly full, its own MAIL FROM is deferred: its bytes are in.
      const probe = await SmtpClient.connect(server.smtpPort, '127.0.0.1', hostile);
      await probe.command('EHLO probe.test');
      assert.match(await mailFromUntil(probe, /^452 /), /^452 4\.7\.0 Too much mail in progress from your address/);
      await probe.quit();
    }
    const third = await openData(server.smtpPort, address, undefined, '127.0.0.4');
    const r = await third.data(`Subject: from a third client\r\n\r\n${'t'.repeat(300_000)}\r\n`);
    assert.equal(r.code, 250, r.text);
    assert.equal(await mailCount(server, jwt), 1);
    // The holders past their share were ended with 421 4.7.0 as their bytes arrived.
    await third.quit();
    await Promise.all(held.map((h) => h.quit()));
  });
});

describe('smtp: the slowest DATA transfer kept', () => {
  it('a transfer below SMTP_DATA_MIN_RATE over a window is ended with 421 4.4.2 and closed; nothing is stored', async () => {
    const server = await start({ SMTP_DATA_MIN_RATE: '1000', SMTP_DATA_RATE_WINDOW: '1s' });
    const { address, jwt } = await createAddress(server);
    const smtp = await openData(server.smtpPort, address, undefined, '127.0.0.1');
    smtp.write('Subject: slow\r\n\r\n');
    // Ten bytes a second: a byte now and then that keeps the socket from idling out.
    const drip = setInterval(() => smtp.write('z'), 100);
    const t = Date.now();
    try {
      const r = await smtp.reply(15_000);
      assert.match(r.text, /^421 4\.4\.2 The message arrives too slowly/);
      assert.ok(Date.now() - t >= 800, 'not before a window has passed');
    } finally {
      clearInterval(drip);
    }
    await assert.rejects(smtp.command('NOOP'), /closed/, 'the connection is closed');
    assert.equal(await mailCount(server, jwt), 0);
  });

  it('a transfer above the rate, with pauses shorter than the window, is stored', async () => {
    const server = await start({ SMTP_DATA_MIN_RATE: '1000', SMTP_DATA_RATE_WINDOW: '2s' });
    const { address, jwt } = await createAddress(server);
    const smtp = await openData(server.smtpPort, address, undefined, '127.0.0.1');
    smtp.write('Subject: paced\r\n\r\n');
    // 4,000 bytes every 500 ms for five seconds: 8,000 bytes a second, twice the window's need at the least.
    for (let i = 0; i < 10; i++) {
      smtp.write(`${'p'.repeat(3998)}\r\n`);
      await new Promise((r) => setTimeout(r, 500));
    }
    const r = await smtp.data('');
    assert.equal(r.code, 250, r.text);
    assert.equal(await mailCount(server, jwt), 1);
    await smtp.quit();
  });

  it('the time a message takes to be stored after its last byte is no slow transfer', async () => {
    const server = await start({ SMTP_DATA_MIN_RATE: '1000', SMTP_DATA_RATE_WINDOW: '300ms' });
    const { address, jwt } = await createAddress(server);
    const smtp = await openData(server.smtpPort, address, undefined, '127.0.0.1');
    // Another connection holds SQLite's write lock: the delivery waits for it, several windows long.
    const other = new Database(join(server.dataDir, SQLITE_FILE));
    try {
      other.exec('BEGIN IMMEDIATE');
      const answer = smtp.data(`Subject: stored late\r\n\r\n${'s'.repeat(5000)}\r\n`);
      let answered = false;
      void answer.then(() => (answered = true), () => (answered = true));
      // What is tested is that time passes: four windows with the transfer over and nothing stored.
      await new Promise((r) => setTimeout(r, 1200));
      assert.equal(answered, false, 'not answered while the store waits');
      other.exec('ROLLBACK');
      const r = await answer;
      assert.equal(r.code, 250, r.text);
    } finally {
      other.close();
    }
    assert.equal(await mailCount(server, jwt), 1);
    await smtp.quit();
  });
});

describe('smtp: SMTP_TRUSTED_NETWORKS', () => {
  it('loopback (the default) is exempt from SMTP_MAX_CLIENTS_PER_IP; a client outside the list is not', async () => {
    const server = await start({ SMTP_MAX_CLIENTS_PER_IP: '3', SMTP_TRUSTED_NETWORKS: '127.0.0.1/32,::1' });
    // Thirty sessions at once from a trusted address, as a test suite's parallel workers open them.
    const trusted = await Promise.all(Array.from({ length: 30 }, () => SmtpClient.connect(server.smtpPort, '127.0.0.1', '127.0.0.1')));
    assert.equal(trusted.length, 30);
    const other = await Promise.all([1, 2, 3].map(() => SmtpClient.connect(server.smtpPort, '127.0.0.1', '127.0.0.2')));
    assert.match(await firstLine(server.smtpPort, '127.0.0.2'), /^421 4\.7\.0 .*Too many connections from your address/);
    await Promise.all([...trusted, ...other].map((c) => c.quit()));
  });

  it('with the default list, every loopback address is trusted', async () => {
    const server = await start({ SMTP_MAX_CLIENTS_PER_IP: '2' });
    const open = await Promise.all(Array.from({ length: 5 }, () => SmtpClient.connect(server.smtpPort, '127.0.0.1', '127.0.0.5')));
    assert.equal(open.length, 5);
    await Promise.all(open.map((c) => c.quit()));
  });
});

describe('smtp: SMTP_DAILY_BYTES', () => {
  it('once a client has sent its bytes of the day, the message past it gets 452 4.7.0 and MAIL FROM is deferred; others are not', async () => {
    const server = await start({ SMTP_DAILY_BYTES: '5000', SMTP_TRUSTED_NETWORKS: '' });
    const { address, jwt } = await createAddress(server);
    const first = await openData(server.smtpPort, address, undefined, '127.0.0.2');
    assert.equal((await first.data(`Subject: one\r\n\r\n${'a'.repeat(3000)}\r\n`)).code, 250);
    await first.script([
      ['MAIL FROM:<s@example.org>', 250],
      [`RCPT TO:<${address}>`, 250],
      ['DATA', 354],
    ]);
    const over = await first.data(`Subject: two\r\n\r\n${'b'.repeat(3000)}\r\n`);
    assert.match(over.text, /^452 4\.7\.0 Your address has sent its bytes for today; try again in \d+ seconds/);
    const wait = Number(/in (\d+) seconds/.exec(over.text)![1]);
    assert.ok(wait > 86_000 && wait <= 86_400, `the day's window, not a re-armed one: ${wait}`);
    assert.match((await first.command('MAIL FROM:<s@example.org>')).text, /^452 4\.7\.0 Your address has sent its bytes for today/);
    await first.quit();
    assert.equal(await mailCount(server, jwt), 1);
    const other = await openData(server.smtpPort, address, undefined, '127.0.0.3');
    assert.equal((await other.data(`Subject: another client\r\n\r\n${'c'.repeat(3000)}\r\n`)).code, 250);
    await other.quit();
  });

  it('is counted in Redis, for every node', { skip: redisSkip }, async () => {
    const env = { REDIS_URL: REDIS_URL!, REDIS_KEY_PREFIX: `ti-test-${randomUUID().slice(0, 8)}:`, SMTP_DAILY_BYTES: '5000', SMTP_TRUSTED_NETWORKS: '' };
    const a = await startTestServer(env);
    const b = await startTestServer(env);
    try {
      const { address } = await createAddress(a);
      const smtp = await openData(a.smtpPort, address, undefined, '127.0.0.2');
      assert.equal((await smtp.data(`Subject: big\r\n\r\n${'a'.repeat(6000)}\r\n`)).code, 452);
      await smtp.quit();
      const elsewhere = await SmtpClient.connect(b.smtpPort, '127.0.0.1', '127.0.0.2');
      await elsewhere.command('EHLO client.test');
      assert.match((await elsewhere.command('MAIL FROM:<s@example.org>')).text, /^452 4\.7\.0 Your address has sent its bytes for today/);
      await elsewhere.quit();
    } finally {
      await a.close();
      await b.close();
    }
  });
});

describe('smtp: DISK_MIN_FREE', () => {
  it('below the free space to keep, MAIL FROM gets 452 4.3.1 and /health_check says storage low (still 200)', async () => {
    // More free space than any disk has: below the watermark at once.
    const server = await start({ DISK_MIN_FREE: '99.99%' });
    const health = await client(server)('/health_check');
    assert.equal(health.status, 200);
    assert.deepEqual({ status: health.json.status, storage: health.json.storage }, { status: 'ok', storage: 'low' });
    const smtp = await SmtpClient.connect(server.smtpPort);
    await smtp.command('EHLO client.test');
    assert.match((await smtp.command('MAIL FROM:<s@example.org>')).text, /^452 4\.3\.1 Insufficient storage here; try again later/);
    await smtp.quit();
  });

  it('0 turns the check off; the default leaves a disk with room alone', async () => {
    for (const env of [{ DISK_MIN_FREE: '0' }, {}] as Record<string, string>[]) {
      const server = await start(env);
      const health = await client(server)('/health_check');
      assert.equal(health.json.storage, 'ok');
      const smtp = await SmtpClient.connect(server.smtpPort);
      await smtp.command('EHLO client.test');
      assert.equal((await smtp.command('MAIL FROM:<s@example.org>')).code, 250);
      await smtp.quit();
    }
  });
});
