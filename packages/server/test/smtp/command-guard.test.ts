// Sessions that hold a connection without sending mail (smtp/command-guard.ts;
// docs/security.md "SMTP"), over real SMTP: SMTP_MAX_JUNK_COMMANDS at its value and one
// past it, its count started again by MAIL FROM; SMTP_COMMAND_TIMEOUT against a client that
// trickles an unfinished line, one that sends whole commands in time, and one whose DATA
// outlasts the timeout. Also the check that smtp-server still calls each connection's
// _onCommand, which the guard wraps: the junk limit would never fire otherwise.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { client, createAddress, message, serversStoppedAfter, SmtpClient } from '../helpers/harness.js';

const start = serversStoppedAfter();

describe('SMTP sessions that send no mail', () => {
  it('SMTP_MAX_JUNK_COMMANDS: N commands that move no mail are answered, N + 1 gets 421 4.7.0 and the connection is closed', async () => {
    const server = await start({ SMTP_MAX_JUNK_COMMANDS: '5' });
    const smtp = await SmtpClient.connect(server.smtpPort);
    // EHLO is one of them.
    await smtp.script([
      ['EHLO client.test', 250],
      ['NOOP', 250],
      ['RSET', 250],
      ['HELP', 214],
      ['NOOP', 250],
    ]);
    const past = await smtp.command('NOOP');
    assert.match(past.text, /^421 4\.7\.0 /);
    await assert.rejects(smtp.command('NOOP'), /closed/, 'the connection is closed');
  });

  it('MAIL FROM starts the count again: a pooled client\'s RSET between messages never reaches it', async () => {
    const server = await start({ SMTP_MAX_JUNK_COMMANDS: '3' });
    const { address, jwt } = await createAddress(server);
    const smtp = await SmtpClient.connect(server.smtpPort);
    await smtp.script([['EHLO client.test', 250]]);
    for (let i = 0; i < 8; i++) {
      await smtp.script([
        ['RSET', 250],
        ['NOOP', 250],
        ['MAIL FROM:<s@example.org>', 250],
        [`RCPT TO:<${address}>`, 250],
        ['DATA', 354],
      ]);
      assert.equal((await smtp.data(message({ Subject: `pooled ${i}` }, 'x'))).code, 250);
    }
    await smtp.quit();
    assert.equal((await client(server)('/api/mails?limit=10&offset=0', { jwt })).json.count, 8);
  });

  it('SMTP_COMMAND_TIMEOUT: a line trickled a byte at a time is cut off with 421 4.4.2; whole commands in time, and a DATA that outlasts it, are not', async () => {
    const server = await start({ SMTP_COMMAND_TIMEOUT: '1s' });
    const { address } = await createAddress(server);

    // Whole commands every 400 ms for 2.4 s: each within the second.
    const steady = await SmtpClient.connect(server.smtpPort);
    await steady.script([['EHLO client.test', 250]]);
    for (let i = 0; i < 6; i++) {
      await sleep(400);
      assert.equal((await steady.command('NOOP')).code, 250);
    }

    // A message whose lines come over 2 s: the next command, sent at once after its 250, is answered.
    await steady.script([
      ['MAIL FROM:<s@example.org>', 250],
      [`RCPT TO:<${address}>`, 250],
      ['DATA', 354],
    ]);
    steady.write('Subject: slow\r\n\r\n');
    for (let i = 0; i < 5; i++) {
      await sleep(400);
      steady.write(`line ${i}\r\n`);
    }
    assert.equal((await steady.data('')).code, 250);
    assert.equal((await steady.command('NOOP')).code, 250);
    await steady.quit();

    // A byte of "NOOP" every 300 ms, never a line's end: closed about a second after the greeting.
    const trickler = await SmtpClient.connect(server.smtpPort);
    const t0 = performance.now();
    const bytes = 'NOOP NOOP NOOP NOOP';
    let sent = 0;
    const timer = setInterval(() => {
      if (sent < bytes.length) trickler.write(bytes[sent++]!);
    }, 300);
    try {
      const closing = await trickler.reply(10_000);
      assert.match(closing.text, /^421 4\.4\.2 /);
      const ms = performance.now() - t0;
      assert.ok(ms >= 1000 && ms < 4000, `closed after ${ms.toFixed(0)} ms`);
      assert.ok(sent < bytes.length, 'closed before the bytes ran out');
    } finally {
      clearInterval(timer);
    }
    await assert.rejects(trickler.command('NOOP'), /closed/, 'the connection is closed');
  });
});
