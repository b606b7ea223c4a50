// @temp-inbox/client: create a disposable inbox, wait for its mail, take the code.
// Uses the global fetch (Node 20+, browsers); no run-time dependencies.
//
//   const client = new TempInboxClient({ baseUrl: 'http://localhost:8080' });
//   await using inbox = await client.createInbox();
//   await signUp(inbox.address);
//   const code = await inbox.waitForCode({ timeout: 30_000 });
export {
  Inbox,
  TempInboxClient,
  retryAfterMs,
  type ClientOptions,
  type CreateInboxOptions,
  type LinkWaitOptions,
  type MailFilter,
  type MailSummary,
  type OpenInboxOptions,
  type WaitOptions,
} from './client.js';
export { TempInboxError, WaitTimeoutError } from './errors.js';
export { classifyLink, rankLinks, type LinkKind, type LinkMatcher } from './links.js';
export { Message, MessageAttachment, type MessageSource } from './message.js';
export { InboxSandbox, type OpenSandboxOptions } from './sandbox.js';
export { InboxWebhook, type InboxWebhookCreated, type InboxWebhookInfo, type WebhookAttempt } from './webhooks.js';
export { withInbox, type WithInboxOptions } from './with-inbox.js';
export type { HeaderField, Mailbox, MailListItem, MailMetadata, MailReport, ParsedAttachment, ParsedMail } from './api-types.js';
