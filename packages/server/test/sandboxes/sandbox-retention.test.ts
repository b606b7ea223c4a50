// A sandbox's retention end to end (docs/decisions.md "Sandboxes"): on the service's own
// clock, its mail outlives MAIL_TTL for SANDBOX_RETENTION and then goes with the sweep, its
// address and token outlive ADDRESS_TTL, and it keeps capturing; an ordinary address of the
// same age is purged as before.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import nodemailer from 'nodemailer';
import { client, createAddress, request, startTestServer, testClock } from '../helpers/harness.js';

const HOUR = 3_600_000;

describe('sandbox retention', () => {
  it('keeps its mail for its own retention and its address past ADDRESS_TTL', async () => {
    const clock = testClock();
    const server = await startTestServer({ SANDBOXES: 'kept:kept-pass', MAIL_TTL: '1h', ADDRESS_TTL: '1h', SANDBOX_RETENTION: '3h', SWEEP_INTERVAL: '1d' }, undefined, undefined, { now: clock.now });
    try {
      const send = (subject: string) =>
        nodemailer.createTransport({ host: '127.0.0.1', port: server.smtpPort, secure: false, auth: { user: 'kept', pass: 'kept-pass' } }).sendMail({ from: 'a@x.example', to: 'who@customer.com', subject, text: 'x' });
      const ordinary = await createAddress(server);
      await send('first');
      const jwt = ((await request(server.httpUrl, '/api/sandbox/token', { method: 'POST', body: { name: 'kept', password: 'kept-pass' } })).json as { jwt: string }).jwt;
      const subjects = async () =>
        ((await client(server)('/api/mails?limit=10&offset=0', { jwt })).json as { results: { metadata: string }[] }).results.map((m) => (JSON.parse(m.metadata) as { subject: string }).subject);

      clock.advance(2 * HOUR);
      await server.mail.sweep();
      assert.equal((await client(server)('/api/settings', { jwt: ordinary.jwt })).status, 401, 'the ordinary address is gone');
      assert.equal((await client(server)('/api/settings', { jwt })).status, 200, "the sandbox's address is not");
      assert.deepEqual(await subjects(), ['first'], 'past MAIL_TTL, within SANDBOX_RETENTION');

      await send('second');
      clock.advance(2 * HOUR);
      await server.mail.sweep();
      assert.deepEqual(await subjects(), ['second'], 'the first, 4 h old, is past its 3 h');
    } finally {
      await server.close();
    }
  });
});
