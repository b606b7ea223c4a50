// Sends real mail over SMTP to a temp-inbox started for a test (nodemailer, no TLS).
import nodemailer from 'nodemailer';
import type Mail from 'nodemailer/lib/mailer/index.js';

export interface SmtpTarget {
  smtpHost?: string;
  smtpPort: number;
}

/** Sends one message; resolves once the server answered 250 (the mail is then stored). */
export async function send(target: SmtpTarget, mail: Mail.Options): Promise<void> {
  const transport = nodemailer.createTransport({ host: target.smtpHost ?? '127.0.0.1', port: target.smtpPort, secure: false, ignoreTLS: true });
  try {
    await transport.sendMail({ from: 'App <app@example.com>', ...mail });
  } finally {
    transport.close();
  }
}

/** Sends several messages over one SMTP connection, in order. */
export async function sendMany(target: SmtpTarget, mails: Mail.Options[]): Promise<void> {
  const transport = nodemailer.createTransport({ host: target.smtpHost ?? '127.0.0.1', port: target.smtpPort, secure: false, ignoreTLS: true, pool: true, maxConnections: 1, maxMessages: Infinity });
  try {
    for (const mail of mails) await transport.sendMail({ from: 'App <app@example.com>', ...mail });
  } finally {
    transport.close();
  }
}

export const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
