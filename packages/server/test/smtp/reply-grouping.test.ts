// Replies to pipelined commands leave in one write (smtp/reply-grouping.ts, RFC 2920
// §3.2). On a bare socket pair with a client that reads at once: the socket is corked
// exactly for the turn in which a chunk is handled (the answers of that turn leave in
// one packet), and never for one that holds STARTTLS. Over a real SMTP session: no
// reply is held back, pipelined or not (the server runs in this process, so how its
// replies are cut into packets cannot be seen from here; starttls.test.ts covers the upgrade).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { groupReplies } from '../../src/smtp/reply-grouping.js';
import { createAddress, startTestServer, type TestServer } from '../helpers/harness.js';

/** The chunks a socket reads until `done` says the text so far is complete. */
function readChunks(socket: Socket, done: (text: string) => boolean): Promise<string[]> {
  const chunks: string[] = [];
  return new Promise((resolve, reject) => {
    const onData = (d: Buffer) => {
      chunks.push(d.toString('latin1'));
      if (done(chunks.join(''))) {
        socket.off('data', onData);
        resolve(chunks);
      }
    };
    socket.on('data', onData);
    socket.once('error', reject);
  });
}

const replies = (text: string) => text.split('\r\n').filter((l) => /^\d{3} /.test(l));

describe('replies to pipelined commands', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server?.close());

  it('MAIL FROM, RCPT TO and DATA sent together are all answered, in order, and the message after them', { timeout: 30_000 }, async () => {
    const { address } = await createAddress(server);
    const socket = connect(server.smtpPort, '127.0.0.1');
    try {
      await readChunks(socket, (t) => replies(t).length === 1);
      socket.write('EHLO client.test\r\n');
      await readChunks(socket, (t) => replies(t).length === 1);
      for (let i = 0; i < 5; i++) {
        const answered = readChunks(socket, (t) => replies(t).length === 3);
        socket.write(`MAIL FROM:<a@example.org>\r\nRCPT TO:<${address}>\r\nDATA\r\n`);
        const chunks = await answered;
        assert.deepEqual(replies(chunks.join('')).map((l) => l.slice(0, 3)), ['250', '250', '354']);
        const stored = readChunks(socket, (t) => replies(t).length === 1);
        socket.write(`Subject: pipelined ${i}\r\n\r\nbody\r\n.\r\n`);
        assert.match((await stored).join(''), /^250 /);
      }
      // One command at a time, as a client that does not pipeline sends them.
      for (const [line, code] of [['RSET', '250'], ['NOOP', '250'], ['QUIT', '221']] as const) {
        const answered = readChunks(socket, (t) => replies(t).length === 1);
        socket.write(`${line}\r\n`);
        assert.equal(replies((await answered).join(''))[0]!.slice(0, 3), code);
      }
    } finally {
      socket.destroy();
    }
  });
});

describe('groupReplies on a socket pair', () => {
  let listener: Server;
  let accepted: Promise<Socket>;
  let client: Socket;
  before(async () => {
    listener = createServer();
    accepted = new Promise((resolve) => listener.once('connection', resolve));
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    client = connect((listener.address() as AddressInfo).port, '127.0.0.1');
  });
  after(() => {
    client?.destroy();
    listener?.close();
  });

  it('corked while a chunk is handled (answers of this turn included), uncorked before any new I/O; never for STARTTLS', { timeout: 30_000 }, async () => {
    const socket = await accepted;
    groupReplies(socket, true);
    const corkedWhileHandled: number[] = [];
    socket.on('data', (d: Buffer) => {
      corkedWhileHandled.push(socket.writableCorked);
      const text = d.toString('latin1');
      socket.write(`250 one ${text.trim()}\r\n`);
      socket.write('250 two\r\n');
      void Promise.resolve().then(() => socket.write('354 three\r\n'));
    });
    const answered = readChunks(client, (t) => replies(t).length === 3);
    client.write('X\r\n');
    const chunks = await answered;
    assert.equal(chunks.length, 1, `one write for the three, got ${JSON.stringify(chunks)}`);
    assert.deepEqual(corkedWhileHandled, [1]);
    assert.equal(socket.writableCorked, 0, 'uncorked after the turn');

    const afterStarttls = readChunks(client, (t) => replies(t).length === 3);
    client.write('starttls\r\n');
    await afterStarttls;
    assert.deepEqual(corkedWhileHandled, [1, 0], 'a chunk holding STARTTLS is not corked');
  });
});

describe('groupReplies where STARTTLS is not offered', () => {
  it('a chunk holding STARTTLS is corked like any other (the server refuses the command and stays plain)', { timeout: 30_000 }, async () => {
    const listener = createServer();
    const accepted = new Promise<Socket>((resolve) => listener.once('connection', resolve));
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    const client = connect((listener.address() as AddressInfo).port, '127.0.0.1');
    try {
      const socket = await accepted;
      groupReplies(socket, false);
      const corkedWhileHandled: number[] = [];
      socket.on('data', () => {
        corkedWhileHandled.push(socket.writableCorked);
        socket.write('502 5.5.1 Unknown command\r\n');
        socket.write('250 next\r\n');
      });
      const answered = readChunks(client, (t) => replies(t).length === 2);
      client.write('STARTTLS\r\nNOOP\r\n');
      assert.equal((await answered).length, 1, 'both answers in one write');
      assert.deepEqual(corkedWhileHandled, [1]);
    } finally {
      client.destroy();
      listener.close();
    }
  });
});
