// The messages the benches send. Bytes are built once; per-message parts (an
// index in the Message-ID and Subject) are spliced in cheaply so that the load
// generator spends its CPU on sending, not on building MIME.
import { randomBytes } from 'node:crypto';

/** Random bytes that never start like a program (MZ, ELF), which the attachment policy refuses at DATA. */
function attachmentBytes(n: number): Buffer {
  const bytes = randomBytes(n);
  bytes[0] = 0;
  return bytes;
}

const CRLF = '\r\n';

/** Lines starting with "." would need dot-stuffing; the bench messages have none (asserted). */
function assertNoDot(text: string): void {
  if (/(^|\r\n)\./.test(text)) throw new Error('bench message has a line starting with "."');
}

const PARAGRAPH =
  'Thanks for signing up. To finish creating your account, confirm your address with the code below or follow the link. ' +
  'If you did not ask for this, you can safely ignore this message; nothing will happen until the address is confirmed.';

/**
 * A typical transactional mail (multipart/alternative, text + HTML, a code and a
 * link), padded to `size` bytes including a per-message header. `tag` keeps the
 * Message-ID unique across runs.
 */
export function messageTemplate(size: number, tag: string): (i: number, to: string) => Buffer {
  const boundary = 'b1_' + tag;
  const code = '482913';
  const link = `https://app.example.com/verify?token=${'x'.repeat(40)}`;
  const text = `Hello,\r\n\r\n${PARAGRAPH}\r\n\r\nYour code is ${code}\r\n\r\n${link}\r\n`;
  const html = `<html><body><p>Hello,</p><p>${PARAGRAPH}</p><p>Your code is <b>${code}</b></p><p><a href="${link}">Confirm</a></p>`;
  const build = (pad: string) =>
    [
      `--${boundary}`,
      'Content-Type: text/plain; charset=utf-8',
      'Content-Transfer-Encoding: 7bit',
      '',
      text,
      `--${boundary}`,
      'Content-Type: text/html; charset=utf-8',
      'Content-Transfer-Encoding: 7bit',
      '',
      `${html}${pad}</body></html>`,
      `--${boundary}--`,
      '',
    ].join(CRLF);
  const headersFor = (i: number, to: string) =>
    [
      'From: "Example App" <no-reply@app.example.com>',
      `To: <${to}>`,
      `Subject: Your verification code ${i}`,
      `Date: ${new Date().toUTCString().replace('GMT', '+0000')}`,
      `Message-ID: <${tag}.${i}@bench.example.com>`,
      'MIME-Version: 1.0',
      `Content-Type: multipart/alternative; boundary="${boundary}"`,
      '',
      '',
    ].join(CRLF);
  // Size the padding on a representative header; real messages differ by a few bytes.
  const base = headersFor(0, 'someone1234@temp-inbox.localhost').length + build('').length;
  const padLen = Math.max(0, size - base);
  // Pad as HTML lines of at most 76 characters, as mailers do.
  const padLine = '<p>' + 'lorem ipsum dolor sit amet '.repeat(2).trim() + '</p>';
  let pad = '';
  while (pad.length + padLine.length + 2 <= padLen) pad += CRLF + padLine;
  pad += ' '.repeat(Math.max(0, padLen - pad.length));
  const body = Buffer.from(build(pad), 'utf8');
  assertNoDot(body.toString('latin1'));
  return (i, to) => Buffer.concat([Buffer.from(headersFor(i, to), 'utf8'), body]);
}

/** A small message (~600 bytes) for seeding large stores. */
export function smallMessage(i: number, to: string): string {
  return [
    'From: "Example App" <no-reply@app.example.com>',
    `To: <${to}>`,
    `Subject: Your verification code ${i}`,
    'Date: Sun, 22 Nov 2026 02:00:00 +0000',
    `Message-ID: <seed.${i}@bench.example.com>`,
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    '',
    'Hello,',
    '',
    'Thanks for signing up. Confirm your address with the code below.',
    '',
    `Your code is ${100000 + (i % 900000)}`,
    '',
    'https://app.example.com/verify?token=abcdefabcdefabcdefabcdefabcdef',
    '',
    'If you did not ask for this, ignore this message.',
    '',
  ].join(CRLF);
}

/** A ~`size`-byte message: a short text part and one base64 attachment filling the rest. */
export function bigMessage(size: number, to: string): Buffer {
  const boundary = 'big_' + randomBytes(6).toString('hex');
  const head = [
    'From: "Example App" <no-reply@app.example.com>',
    `To: <${to}>`,
    'Subject: Your monthly report',
    `Date: ${new Date().toUTCString().replace('GMT', '+0000')}`,
    `Message-ID: <big.${Date.now()}@bench.example.com>`,
    'MIME-Version: 1.0',
    `Content-Type: multipart/mixed; boundary="${boundary}"`,
    '',
    `--${boundary}`,
    'Content-Type: text/plain; charset=utf-8',
    '',
    'The report is attached.',
    `--${boundary}`,
    'Content-Type: application/pdf; name="report.pdf"',
    'Content-Disposition: attachment; filename="report.pdf"',
    'Content-Transfer-Encoding: base64',
    '',
    '',
  ].join(CRLF);
  const tail = `${CRLF}--${boundary}--${CRLF}`;
  const room = size - head.length - tail.length;
  // base64 lines of 76 characters + CRLF: 78 bytes carry 57 raw bytes.
  const rawBytes = Math.floor(room / 78) * 57;
  const b64 = attachmentBytes(rawBytes).toString('base64');
  const lines: string[] = [];
  for (let i = 0; i < b64.length; i += 76) lines.push(b64.slice(i, i + 76));
  return Buffer.from(head + lines.join(CRLF) + tail, 'latin1');
}
