// A message stored into a sandbox: delivered to its address with the whole envelope kept
// (its recipients searchable), then, past the sandbox's quota, its oldest mails removed as
// Mailpit's max messages does (the newest always stays) and their removal announced.
import type { EventBus } from '../mail/events/events.js';
import type { MessageBuffer } from '../mail/message-buffer.js';
import type { ReceivedTrace } from '../mail/received.js';
import type { MailService } from '../mail/service.js';
import { badRequest } from '../domain/errors.js';
import type { SandboxStore } from '../storage/store.js';
import type { SandboxEnvelope } from './types.js';

/** The SMTP trace of a captured message, as the receiver gives it. */
export type CaptureTrace = Omit<ReceivedTrace, 'recipient' | 'id' | 'date'>;

export interface CaptureOptions {
  store: SandboxStore;
  mail: Pick<MailService, 'deliver'>;
  /** Announces the mails a quota removed. */
  bus?: EventBus | undefined;
}

/** Stores the message into sandbox `sandboxId`; its mail's uuid. */
export async function captureInto({ store, mail, bus }: CaptureOptions, sandboxId: number, message: MessageBuffer, envelope: SandboxEnvelope, client: string, trace: CaptureTrace): Promise<string> {
  const record = await store.getSandbox(sandboxId);
  if (!record) throw badRequest('No such sandbox.');
  const [delivered] = await mail.deliver({
    sender: envelope.from,
    recipients: [{ id: record.addressId, address: record.address, createdAt: record.createdAt, rcpt: record.address }],
    message,
    client,
    trace,
    capture: { from: envelope.from, to: envelope.to },
  });
  // Past its quota the oldest mails go, as Mailpit's max messages does; the newest always stays.
  if (record.maxMails > 0 || record.maxBytes > 0) {
    const removed = await store.trimMails(record.addressId, record.maxMails, record.maxBytes);
    for (const uuid of removed) bus?.publish(record.addressId, { type: 'mail_deleted', uuid });
  }
  return delivered!.uuid;
}

