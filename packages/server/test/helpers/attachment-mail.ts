// Mail with attachments for the attachment policy's tests: a multipart/mixed message of
// given parts, sent over real SMTP with the final reply given back.
import { openData, type TestServer } from './harness.js';

export interface Part {
  filename: string;
  content: Buffer;
  type?: string;
}

/** A multipart/mixed message: a text body, then each part base64-encoded as an attachment. */
export function multipart(parts: Part[], subject = 'with attachments'): string {
  const b = 'b-policy-boundary';
  const lines = [`From: a@example.org`, `To: b@example.org`, `Subject: ${subject}`, 'MIME-Version: 1.0', `Content-Type: multipart/mixed; boundary="${b}"`, '', `--${b}`, 'Content-Type: text/plain', '', 'see attached', ''];
  for (const p of parts) {
    lines.push(`--${b}`, `Content-Type: ${p.type ?? 'application/octet-stream'}`, 'Content-Transfer-Encoding: base64', `Content-Disposition: attachment; filename="${p.filename}"`, '');
    lines.push(...(p.content.toString('base64').match(/.{1,76}/g) ?? ['']));
  }
  lines.push(`--${b}--`, '');
  return lines.join('\r\n');
}

export async function send(server: TestServer, to: string, message: string): Promise<{ code: number; text: string }> {
  const smtp = await openData(server.smtpPort, to);
  try {
    return await smtp.data(message);
  } finally {
    await smtp.quit();
  }
}
