// The response headers of GET /api/attachment/{uuid}/{id}, exactly as the route sets
// them (http/routes/mails.ts): Content-Type (the part's type when it is a valid
// token/token, lower-cased, else application/octet-stream), Content-Disposition
// (RFC 6266: attachment, an ASCII filename fallback and filename* for any other
// name; path separators replaced, control characters removed), a sandboxing
// Content-Security-Policy, X-Content-Type-Options: nosniff and Cache-Control:
// private, no-store — read from the raw response head, so a repeated header shows.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { client, createAddress, sendMail, startTestServer, type TestServer } from '../helpers/harness.js';

/** Random bytes that never start like a program (MZ, ELF), which the attachment policy refuses at DATA. */
function attachmentBytes(n: number): Buffer {
  const bytes = randomBytes(n);
  bytes[0] = 0;
  return bytes;
}

/** One raw GET; the status line and every header line as sent (names lower-cased), and the body bytes. */
async function rawGet(port: number, path: string, jwt: string): Promise<{ status: number; headers: [string, string][]; body: Buffer }> {
  const socket = connect(port, '127.0.0.1');
  const chunks: Buffer[] = [];
  socket.on('data', (c: Buffer) => chunks.push(c));
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${jwt}\r\nConnection: close\r\n\r\n`);
  await new Promise<void>((resolve) => socket.once('close', () => resolve()));
  const all = Buffer.concat(chunks);
  const split = all.indexOf('\r\n\r\n');
  const [statusLine, ...lines] = all.subarray(0, split).toString('latin1').split('\r\n');
  const headers = lines.map((l): [string, string] => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]);
  return { status: Number(statusLine!.split(' ')[1]), headers, body: all.subarray(split + 4) };
}

const rfc2231 = (s: string) => encodeURIComponent(s).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
const encodedWord = (s: string) => `=?UTF-8?B?${Buffer.from(s).toString('base64')}?=`;

interface Part {
  headers: string[];
  content: Buffer;
  /** What the download must answer. */
  type: string;
  disposition: string;
}

const PARTS: Part[] = [
  {
    // An ASCII name is sent as a token, without filename*.
    headers: ['Content-Type: application/pdf', 'Content-Disposition: attachment; filename="report.pdf"'],
    content: attachmentBytes(1000),
    type: 'application/pdf',
    disposition: 'attachment; filename=report.pdf',
  },
  {
    // A non-ASCII name (RFC 2231 in the mail): an ASCII fallback with "?" and the exact name in filename*.
    headers: ['Content-Type: Application/X-Custom', `Content-Disposition: attachment; filename*=UTF-8''${rfc2231('Prüfbericht 東京.bin')}`],
    content: attachmentBytes(700),
    type: 'application/x-custom',
    disposition: `attachment; filename="Pr?fbericht ??.bin"; filename*=UTF-8''Pr%C3%BCfbericht%20%E6%9D%B1%E4%BA%AC.bin`,
  },
  {
    // RFC 2047 in a quoted parameter, as many mailers send it.
    headers: ['Content-Type: image/png', `Content-Disposition: attachment; filename="${encodedWord('résumé.png')}"`],
    content: attachmentBytes(300),
    type: 'image/png',
    disposition: `attachment; filename="r?sum?.png"; filename*=UTF-8''r%C3%A9sum%C3%A9.png`,
  },
  {
    // Path separators become "_"; control characters (a tab here) are dropped.
    headers: ['Content-Type: text/plain', `Content-Disposition: attachment; filename="${encodedWord('..\\..\\etc/pass\twd.txt')}"`],
    content: Buffer.from('not a password file\n'),
    type: 'text/plain',
    disposition: 'attachment; filename=.._.._etc_passwd.txt',
  },
  {
    // A name of line breaks and a tab only (the metadata keeps them): "attachment".
    headers: ['Content-Type: text/plain', `Content-Disposition: attachment; filename="${encodedWord('\r\n\t')}"`],
    content: Buffer.from('nameless\n'),
    type: 'text/plain',
    disposition: 'attachment; filename=attachment',
  },
  {
    // A double quote in the name is escaped inside the quoted fallback.
    headers: ['Content-Type: text/csv', `Content-Disposition: attachment; filename="${encodedWord('say "hi".csv')}"`],
    content: Buffer.from('a,b\n'),
    type: 'text/csv',
    disposition: 'attachment; filename="say \\"hi\\".csv"',
  },
  {
    // A type that is not token/token is not passed on.
    headers: ['Content-Type: garbage', 'Content-Disposition: attachment; filename="x.bin"'],
    content: randomBytes(64),
    type: 'application/octet-stream',
    disposition: 'attachment; filename=x.bin',
  },
];

describe('GET /api/attachment/{uuid}/{id}: response headers', () => {
  let server: TestServer;
  let jwt: string;
  let uuid: string;
  before(async () => {
    server = await startTestServer();
    const created = await createAddress(server);
    jwt = created.jwt;
    const raw = [
      'Subject: headers',
      'Content-Type: multipart/mixed; boundary="b"',
      '',
      '--b',
      'Content-Type: text/plain',
      '',
      'the files',
      ...PARTS.flatMap((p) => ['--b', ...p.headers, 'Content-Transfer-Encoding: base64', '', p.content.toString('base64')]),
      '--b--',
      '',
    ].join('\r\n');
    await sendMail(server.smtpPort, { to: [created.address], message: raw });
    uuid = (await client(server)('/api/mails?limit=1&offset=0', { jwt })).json.results[0].uuid as string;
  });
  after(() => server?.close());

  PARTS.forEach((part, id) => {
    it(`attachment ${id}: Content-Type ${part.type}, Content-Disposition ${part.disposition}`, async () => {
      const res = await rawGet(server.httpPort, `/api/attachment/${uuid}/${id}`, jwt);
      assert.equal(res.status, 200);
      const values = (name: string) => res.headers.filter(([n]) => n === name).map(([, v]) => v);
      assert.deepEqual(values('content-type'), [part.type]);
      assert.deepEqual(values('content-disposition'), [part.disposition]);
      assert.deepEqual(values('content-security-policy'), ["default-src 'none'; sandbox"]);
      assert.deepEqual(values('x-content-type-options'), ['nosniff']);
      assert.deepEqual(values('cache-control'), ['private, no-store']);
      assert.deepEqual(values('content-length'), [String(part.content.length)]);
      assert.deepEqual(values('set-cookie'), []);
      assert.ok(res.body.equals(part.content), 'the decoded bytes');
    });
  });

  it('the metadata lists the names and types as decoded, before the download cleans them', async () => {
    const meta = JSON.parse((await client(server)(`/api/mail/${uuid}`, { jwt })).json.metadata);
    assert.deepEqual(
      meta.attachments.map((a: { content_type: string }) => a.content_type),
      ['application/pdf', 'application/x-custom', 'image/png', 'text/plain', 'text/plain', 'text/csv', 'garbage'],
    );
    assert.deepEqual(
      meta.attachments.map((a: { filename: string }) => a.filename),
      ['report.pdf', 'Prüfbericht 東京.bin', 'résumé.png', '..\\..\\etc/pass\twd.txt', '\r\n\t', 'say "hi".csv', 'x.bin'],
    );
  });
});
