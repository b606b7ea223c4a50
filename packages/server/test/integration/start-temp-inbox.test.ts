// startTempInbox(): the in-process service for test suites — SQLite in a fresh
// temporary directory removed by stop(), free ports, rate limits off.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { connect, createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { startTempInbox } from '../../src/index.js';
import { createAddress, message, request, sendMail } from '../helpers/harness.js';

function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

describe('startTempInbox', () => {
  it('serves HTTP and SMTP on free ports with its own data directory, and stop() removes it', async () => {
    const one = await startTempInbox();
    const two = await startTempInbox({ domain: 'Mail.Test' });
    try {
      assert.match(one.url, /^http:\/\/127\.0\.0\.1:\d+$/);
      assert.notEqual(one.url, two.url);
      assert.notEqual(one.smtpPort, two.smtpPort);
      assert.equal(one.smtpHost, '127.0.0.1');
      assert.equal(one.domain, 'temp-inbox.localhost');
      assert.equal(two.domain, 'mail.test');
      assert.ok(one.dataDir.startsWith(tmpdir()), one.dataDir);
      assert.ok(existsSync(one.dataDir), 'the data directory exists while it runs');
      assert.notEqual(one.dataDir, two.dataDir);
      assert.equal((await request(one.url, '/health_check')).status, 200);

      const { address, jwt } = await createAddress({ httpUrl: two.url }, { name: 'kit' });
      assert.equal(address, 'kit@mail.test');
      assert.equal((await sendMail(two.smtpPort, { to: [address], message: message({ Subject: 'Hello' }, 'Code 424242') })).code, 250);
      const listed = await request(two.url, '/api/mails?limit=10&offset=0', { jwt });
      assert.equal(listed.json.count, 1);
    } finally {
      await one.stop();
      await two.stop();
    }
    assert.ok(!existsSync(one.dataDir) && !existsSync(two.dataDir), 'stop() removed the data directories');
    assert.ok(await refused(one.smtpPort), 'SMTP no longer listens');
    assert.ok(await refused(Number(new URL(one.url).port)), 'HTTP no longer listens');
    await one.stop(); // a second stop does nothing
  });

  it('has rate limits off: far more requests and mails than the defaults allow all succeed', async () => {
    const server = await startTempInbox();
    try {
      // RATE_LIMIT_NEW_ADDRESS defaults to 10 per minute, RATE_LIMIT_MAILS to 60.
      const addresses = [];
      for (let i = 0; i < 15; i++) addresses.push(await createAddress({ httpUrl: server.url }));
      for (let i = 0; i < 70; i++) assert.equal((await request(server.url, '/api/mails?limit=1&offset=0', { jwt: addresses[0]!.jwt })).status, 200);
      for (const a of addresses) assert.equal((await sendMail(server.smtpPort, { to: [a.address], message: message({ Subject: 'x' }, 'y') })).code, 250);
    } finally {
      await server.stop();
    }
  });

  it('takes other configuration variables through env, and removes the directory when start-up fails', async () => {
    const server = await startTempInbox({ env: { CUSTOM_NAMES: 'false' } });
    try {
      const res = await request(server.url, '/api/new_address', { method: 'POST', body: { name: 'wanted' } });
      assert.equal(res.status, 403);
    } finally {
      await server.stop();
    }
    const runDirs = () => readdirSync(tmpdir()).filter((d) => d.startsWith('temp-inbox-run-')).sort();
    const before = runDirs();
    await assert.rejects(startTempInbox({ env: { MAIL_TTL: 'soon' } }), /MAIL_TTL is invalid/);
    await assert.rejects(startTempInbox({ httpPort: Number(new URL(server.url).port), env: { HTTP_HOST: '256.0.0.1' } }));
    assert.deepEqual(runDirs(), before, 'no data directory is left behind');
  });

  it('a port that is taken: the error names the option, the variable and the address; the SMTP listener it opened is closed again', async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const port = (holder.address() as AddressInfo).port;
    const smtpFree = createServer();
    await new Promise<void>((resolve) => smtpFree.listen(0, '127.0.0.1', resolve));
    const smtpPort = (smtpFree.address() as AddressInfo).port;
    await new Promise((resolve) => smtpFree.close(resolve));
    try {
      await assert.rejects(startTempInbox({ httpPort: port, smtpPort }), (err: Error) => {
        assert.equal(err.message, `httpPort (HTTP_PORT): 127.0.0.1:${port} is already in use; set HTTP_PORT to a free port`);
        return true;
      });
      assert.ok(await refused(smtpPort), 'the SMTP port opened before HTTP failed is free again');
      await assert.rejects(startTempInbox({ smtpPort: port }), (err: Error) => {
        assert.equal(err.message, `smtpPort (SMTP_PORT): 127.0.0.1:${port} is already in use; set SMTP_PORT to a free port`);
        return true;
      });
    } finally {
      holder.close();
    }
  });
});
