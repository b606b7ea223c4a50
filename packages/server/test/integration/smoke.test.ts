import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { client, createAddress, DOMAIN, message, sendMail, startTestServer, type TestServer } from '../helpers/harness.js';

describe('smoke: SMTP in, API out', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.close());

  it('delivers a mail that is listed right after 250', async () => {
    const { address, jwt } = await createAddress(server, { name: 'smoke' });
    assert.equal(address, `smoke@${DOMAIN}`);
    await sendMail(server.smtpPort, { to: [address], message: message({ Subject: 'Hi', 'Message-ID': '<m1@test>' }, 'Code 123456') });
    const res = await client(server)('/api/mails?limit=10&offset=0', { jwt });
    assert.equal(res.status, 200);
    assert.equal(res.json.count, 1);
    assert.equal(JSON.parse(res.json.results[0].metadata).codes[0], '123456');
  });
});
