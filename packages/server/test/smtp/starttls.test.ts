// STARTTLS (RFC 3207) with a real certificate: a self-signed certificate is made
// with the openssl CLI at test time and given to the server through SMTP_TLS_CERT
// and SMTP_TLS_KEY. A client upgrades, verifies the server against that
// certificate (and fails against another one), and delivers; a plain-text client
// still delivers, because STARTTLS is offered, not required.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { connect as netConnect, type Socket } from 'node:net';
import { join } from 'node:path';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { client, createAddress, message, startTestServer, tmp, type TestServer } from '../helpers/harness.js';

const HOSTNAME = 'mx.test';

/** One SMTP conversation over any socket, plain or TLS; the socket can be swapped after STARTTLS. */
class Wire {
  private buffer = '';
  private waiters: (() => void)[] = [];
  private closed = false;
  constructor(public socket: Socket | TLSSocket) {
    this.listen(socket);
  }

  private listen(socket: Socket | TLSSocket): void {
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => {
      this.buffer += d;
      this.wake();
    });
    socket.on('close', () => {
      this.closed = true;
      this.wake();
    });
    socket.on('error', () => undefined);
  }

  private wake(): void {
    this.waiters.splice(0).forEach((w) => w());
  }

  /** Stops reading the plain socket (the TLS layer takes it over) and reads from `next`. */
  swap(next: TLSSocket): void {
    this.socket.removeAllListeners('data');
    this.socket.removeAllListeners('close');
    this.socket = next;
    this.closed = false;
    this.listen(next);
  }

  /** Bytes received and not yet read as a reply. */
  get unread(): string {
    return this.buffer;
  }

  async reply(timeoutMs = 10_000): Promise<{ code: number; text: string }> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const m = /^(?:\d{3}-[^\r\n]*\r\n)*(\d{3})(?: [^\r\n]*)?\r\n/.exec(this.buffer);
      if (m) {
        this.buffer = this.buffer.slice(m[0].length);
        return { code: Number(m[1]), text: m[0] };
      }
      if (this.closed) throw new Error(`connection closed; unread: ${JSON.stringify(this.buffer)}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`reply timed out; unread: ${JSON.stringify(this.buffer)}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  command(line: string): Promise<{ code: number; text: string }> {
    this.socket.write(`${line}\r\n`, 'latin1');
    return this.reply();
  }

  /** The message (no line starts with "."), then <CRLF>.<CRLF>. */
  data(text: string): Promise<{ code: number; text: string }> {
    assert.doesNotMatch(text, /(^|\r\n)\./, 'test messages need no dot-stuffing');
    this.socket.write(`${text}${text.endsWith('\r\n') ? '' : '\r\n'}.\r\n`, 'latin1');
    return this.reply();
  }
}

async function plainConnect(port: number): Promise<Wire> {
  const socket = netConnect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  const wire = new Wire(socket);
  const greeting = await wire.reply();
  assert.equal(greeting.code, 220, greeting.text);
  return wire;
}

/** Starts TLS on the wire's plain socket, verifying the server against `ca` as `servername`. */
async function handshake(wire: Wire, ca: string): Promise<TLSSocket> {
  const secure = tlsConnect({ socket: wire.socket as Socket, servername: HOSTNAME, ca, minVersion: 'TLSv1.2' });
  await new Promise<void>((resolve, reject) => {
    secure.once('secureConnect', resolve);
    secure.once('error', reject);
  });
  wire.swap(secure);
  return secure;
}

const ehloKeywords = (text: string) =>
  text
    .split('\r\n')
    .filter(Boolean)
    .slice(1)
    .map((l) => l.slice(4));

/** The openssl CLI makes the certificates; without it the suite is skipped loudly, or fails under REQUIRE_SERVICES=1. */
function opensslMissing(): string | false {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return false;
  } catch {
    if (process.env.REQUIRE_SERVICES === '1') throw new Error('openssl is required (REQUIRE_SERVICES=1) but cannot be run');
    process.stderr.write('\n!!!!! SKIPPED: STARTTLS suite — no openssl CLI (set REQUIRE_SERVICES=1 to make this a failure) !!!!!\n\n');
    return 'openssl is not installed';
  }
}

describe('STARTTLS with a real certificate', { skip: opensslMissing() }, () => {
  const dir = tmp('temp-inbox-tls-');
  const certFile = join(dir, 'cert.pem');
  const keyFile = join(dir, 'key.pem');
  const otherCertFile = join(dir, 'other-cert.pem');
  let cert: string;
  let otherCert: string;
  let server: TestServer;

  const selfSigned = (certPath: string, keyPath: string) =>
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2', '-subj', `/CN=${HOSTNAME}`, '-addext', `subjectAltName=DNS:${HOSTNAME}`, '-keyout', keyPath, '-out', certPath],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );

  before(async () => {
    selfSigned(certFile, keyFile);
    // Another certificate for the same name: a client that trusts only it must refuse the server.
    selfSigned(otherCertFile, join(dir, 'other-key.pem'));
    cert = readFileSync(certFile, 'utf8');
    otherCert = readFileSync(otherCertFile, 'utf8');
    server = await startTestServer({ SMTP_HOSTNAME: HOSTNAME, SMTP_TLS_CERT: certFile, SMTP_TLS_KEY: keyFile });
  });
  after(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const stored = async (jwt: string) => {
    const api = client(server);
    const list = await api('/api/mails?limit=10&offset=0', { jwt });
    assert.equal(list.status, 200);
    return Promise.all((list.json.results as { uuid: string }[]).map(async (m) => (await api(`/api/mail/${m.uuid}`, { jwt })).json as { raw: string; message_id: string }));
  };

  it('upgrades with STARTTLS, presents exactly the configured certificate, verifies against it, and stores the mail (Received: with ESMTPS)', async () => {
    const { address, jwt } = await createAddress(server);
    const wire = await plainConnect(server.smtpPort);
    try {
      const ehlo = await wire.command('EHLO client.test');
      assert.equal(ehlo.code, 250);
      assert.ok(ehloKeywords(ehlo.text).includes('STARTTLS'), ehlo.text);
      const ready = await wire.command('STARTTLS');
      assert.equal(ready.text, '220 2.0.0 Ready to start TLS\r\n');

      const secure = await handshake(wire, cert);
      assert.equal(secure.authorized, true, String(secure.authorizationError));
      const presented = secure.getPeerX509Certificate();
      assert.ok(presented);
      assert.equal(presented.fingerprint256, new X509Certificate(cert).fingerprint256, 'the server presents SMTP_TLS_CERT');

      // RFC 3207 §4.2: the session starts over; STARTTLS is no longer offered.
      const again = await wire.command('EHLO client.test');
      assert.equal(again.code, 250);
      assert.ok(!ehloKeywords(again.text).includes('STARTTLS'), again.text);
      assert.equal((await wire.command('STARTTLS')).code, 503, 'TLS is already active');
      assert.equal((await wire.command('MAIL FROM:<tls@example.org>')).code, 250);
      assert.equal((await wire.command(`RCPT TO:<${address}>`)).code, 250);
      assert.equal((await wire.command('DATA')).code, 354);
      const final = await wire.data(message({ Subject: 'over tls', 'Message-ID': '<tls-1@test>' }, 'sent encrypted'));
      assert.equal(final.text, '250 2.6.0 Ok: stored 1 copy\r\n');
      assert.equal((await wire.command('QUIT')).code, 221);
    } finally {
      wire.socket.destroy();
    }

    const mails = await stored(jwt);
    assert.equal(mails.length, 1);
    assert.equal(mails[0]!.message_id, '<tls-1@test>');
    assert.match(mails[0]!.raw, new RegExp(`^Received: from client\\.test \\(\\[127\\.0\\.0\\.1\\]\\)\\r\\n\\tby ${HOSTNAME.replace('.', '\\.')} \\(temp-inbox\\) with ESMTPS id [0-9a-f]{8}\\r\\n`));
    assert.match(mails[0]!.raw, /\r\n\r\nsent encrypted\r\n$/);
  });

  it('a client that trusts another certificate refuses the handshake; nothing is stored and the server keeps serving', async () => {
    const { address, jwt } = await createAddress(server);
    const wire = await plainConnect(server.smtpPort);
    try {
      await wire.command('EHLO client.test');
      assert.equal((await wire.command('STARTTLS')).code, 220);
      await assert.rejects(handshake(wire, otherCert), (err: NodeJS.ErrnoException) => {
        assert.equal(err.code, 'DEPTH_ZERO_SELF_SIGNED_CERT');
        return true;
      });
    } finally {
      wire.socket.destroy();
    }
    assert.equal((await stored(jwt)).length, 0);
    // The next client is served (plain text this time).
    const next = await plainConnect(server.smtpPort);
    try {
      assert.equal((await next.command('EHLO client.test')).code, 250);
      assert.equal((await next.command('MAIL FROM:<s@example.org>')).code, 250);
      assert.equal((await next.command(`RCPT TO:<${address}>`)).code, 250);
    } finally {
      next.socket.destroy();
    }
    assert.equal((await client(server)('/health_check')).status, 200);
  });

  it('STARTTLS is optional: a plain-text client is offered it, declines, and its mail is stored (Received: with ESMTP)', async () => {
    const { address, jwt } = await createAddress(server);
    const wire = await plainConnect(server.smtpPort);
    try {
      const ehlo = await wire.command('EHLO plain.test');
      assert.ok(ehloKeywords(ehlo.text).includes('STARTTLS'), ehlo.text);
      assert.equal((await wire.command('MAIL FROM:<plain@example.org>')).code, 250);
      assert.equal((await wire.command(`RCPT TO:<${address}>`)).code, 250);
      assert.equal((await wire.command('DATA')).code, 354);
      assert.equal((await wire.data(message({ Subject: 'in the clear', 'Message-ID': '<plain-1@test>' }, 'not encrypted'))).text, '250 2.6.0 Ok: stored 1 copy\r\n');
      assert.equal((await wire.command('QUIT')).code, 221);
    } finally {
      wire.socket.destroy();
    }
    const mails = await stored(jwt);
    assert.equal(mails.length, 1);
    assert.equal(mails[0]!.message_id, '<plain-1@test>');
    assert.match(mails[0]!.raw, /^Received: from plain\.test \(\[127\.0\.0\.1\]\)\r\n\tby mx\.test \(temp-inbox\) with ESMTP id /);
  });

  it('commands pipelined in plain text behind STARTTLS are discarded, never run inside the TLS session (CVE-2011-0411)', async () => {
    const { address, jwt } = await createAddress(server);
    const wire = await plainConnect(server.smtpPort);
    try {
      await wire.command('EHLO client.test');
      // An attacker on the path appends a whole transaction to the client's STARTTLS.
      wire.socket.write(`STARTTLS\r\nMAIL FROM:<injected@example.org>\r\nRCPT TO:<${address}>\r\nDATA\r\n`);
      assert.equal((await wire.reply()).code, 220);
      // Had the server answered the injected commands in plain text, the handshake would fail on them.
      await handshake(wire, cert);
      // The first reply inside TLS answers the client's own command, not an injected one.
      const ehlo = await wire.command('EHLO client.test');
      assert.equal(ehlo.code, 250);
      assert.equal(wire.unread, '');
      // No transaction survived the upgrade: RCPT without MAIL is out of sequence.
      assert.equal((await wire.command(`RCPT TO:<${address}>`)).code, 503);
      assert.equal((await wire.command('QUIT')).code, 221);
    } finally {
      wire.socket.destroy();
    }
    assert.equal((await stored(jwt)).length, 0);
  });

  it('a certificate file that cannot be read stops start-up, naming the file; one of the pair alone is a configuration error', async () => {
    const missing = join(dir, 'missing-cert.pem');
    await assert.rejects(startTestServer({ SMTP_TLS_CERT: missing, SMTP_TLS_KEY: keyFile }, join(dir, 'data')), (err: NodeJS.ErrnoException) => {
      assert.equal(err.code, 'ENOENT');
      assert.ok(err.message.includes(missing), err.message);
      return true;
    });
    await assert.rejects(startTestServer({ SMTP_TLS_CERT: certFile }, join(dir, 'data')), { name: 'ConfigError', message: 'SMTP_TLS_CERT and SMTP_TLS_KEY must be set together.' });
  });
});
