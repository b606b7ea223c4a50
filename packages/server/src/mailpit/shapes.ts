// The resources of the Mailpit-compatible API (docs/api.md "Moving from Mailpit or
// MailHog"), field for field as Mailpit's API v1 sends them: a message's ID is the mail's
// uuid, its attachments' PartIDs our attachment ids. Pure functions from a stored mail
// (and its parsed view) to Mailpit's JSON: no I/O, so that the worker that reshapes a
// large message (summary-worker.ts) uses them too.
import type { Mailbox, MailMetadata, ParsedAttachment, ParsedMailContent } from '@temp-inbox/api';
import type { StoredMetadata } from '../mail/parse/metadata.js';
import type { ChaosConfig } from '../sandboxes/types.js';

/** A stored mail as the presenters need it. */
export interface MailpitMail {
  uuid: string;
  messageId: string;
  createdAt: number;
  seen: boolean;
  metadata: MailMetadata;
  tags: string[];
  /** The sandbox's name: the SMTP (or API) login that sent it, Mailpit's Username. */
  username: string;
  /** The SMTP envelope's recipients, when the mail kept them (Bcc is the rest of them). */
  envelopeTo?: string[] | undefined;
  /** MAIL FROM, '' for the null sender; undefined when unknown. */
  envelopeFrom?: string | undefined;
  /** The attachments' checksums by attachment id (the summary's only). */
  checksums?: Record<string, { MD5: string; SHA1: string; SHA256: string }>;
}

export interface MailpitAddress {
  Name: string;
  Address: string;
}

/** Mailpit's snippet: up to 250 characters of the text. */
const SNIPPET_CHARS = 250;

export const address = (m: Mailbox): MailpitAddress => ({ Name: m.name, Address: m.address });

/** Mailpit lists the Message-ID without its angle brackets. */
export const messageIdOf = (raw: string): string => raw.trim().replace(/^<(.*)>$/s, '$1');

/**
 * A message's MessageID: Mailpit gives a mail without one a generated ID (`…@mailpit`);
 * ours is derived from the uuid, so it is the same on every read (the stored message is not changed).
 */
export const mailpitMessageId = (m: Pick<MailpitMail, 'uuid' | 'messageId'>): string => messageIdOf(m.messageId) || `${m.uuid}@temp-inbox`;

/** Recipients of the envelope that neither To nor Cc names: the Bcc recipients. */
export function bccOf(envelopeTo: string[] | undefined, named: Mailbox[]): MailpitAddress[] {
  if (!envelopeTo) return [];
  const seen = new Set(named.map((m) => m.address.toLowerCase()));
  const out: MailpitAddress[] = [];
  for (const rcpt of envelopeTo) {
    const key = rcpt.toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ Name: '', Address: rcpt });
  }
  return out;
}

/** One message of a list (GET /api/v1/messages, /search): what the stored metadata holds. */
export function listItem(m: MailpitMail) {
  const md: StoredMetadata = m.metadata;
  return {
    ID: m.uuid,
    MessageID: mailpitMessageId(m),
    Read: m.seen,
    From: address(md.from),
    To: md.to.map(address),
    Cc: (md.cc ?? []).map(address),
    // Mail stored before Cc was kept cannot tell a Cc recipient of its envelope from a Bcc one: none listed.
    Bcc: md.cc ? bccOf(m.envelopeTo, [...md.to, ...md.cc]) : [],
    ReplyTo: (md.reply_to ?? []).map(address),
    Subject: md.subject,
    Created: new Date(m.createdAt).toISOString(),
    Username: m.username,
    Tags: m.tags,
    Size: md.size,
    Attachments: md.attachments.length,
    Snippet: md.preview.slice(0, SNIPPET_CHARS),
  };
}

export type MailpitListItem = ReturnType<typeof listItem>;

/** The list envelope of GET /api/v1/messages and /search. */
export function messageList(p: { total: number; unread: number; matched: number; matchedUnread: number; start: number; tags: string[]; messages: MailpitListItem[] }) {
  return {
    total: p.total,
    unread: p.unread,
    count: p.messages.length,
    messages_count: p.matched,
    messages_unread: p.matchedUnread,
    start: p.start,
    tags: p.tags,
    messages: p.messages,
  };
}

function attachment(a: ParsedAttachment, checksums: MailpitMail['checksums']) {
  const sums = checksums?.[a.id];
  return { PartID: a.id, FileName: a.filename || a.content_id || '', ContentType: a.content_type, ContentID: a.content_id ?? '', Size: a.size, ...(sums ? { Checksums: sums } : {}) };
}

const headerValue = (view: ParsedMailContent, name: string): string => view.headers.find((h) => h.name.toLowerCase() === name)?.value ?? '';

/** List-Unsubscribe as Mailpit summarises it: the header, its links (one mailto: and one http(s) at most), problems found. */
export function listUnsubscribe(view: ParsedMailContent) {
  const header = headerValue(view, 'list-unsubscribe');
  const links: string[] = [];
  const errors: string[] = [];
  if (header) {
    const found = [...header.matchAll(/<([^>]*)>/g)].map((m) => m[1]!.trim());
    if (found.length === 0) errors.push('No <link> found in List-Unsubscribe header');
    for (const link of found) {
      if (/^mailto:/i.test(link) && !links.some((l) => /^mailto:/i.test(l))) links.push(link);
      else if (/^https?:\/\//i.test(link) && !links.some((l) => /^https?:/i.test(l))) links.push(link);
      else if (!/^(mailto:|https?:\/\/)/i.test(link)) errors.push(`Unsupported link: ${link.slice(0, 200)}`);
    }
  }
  return { Header: header, Links: links, Errors: errors.join('; '), HeaderPost: headerValue(view, 'list-unsubscribe-post') };
}

/** GET /api/v1/message/{ID}: the whole message, from its parsed view. */
export function messageSummary(m: MailpitMail, view: ParsedMailContent) {
  const returnPath = messageIdOf(headerValue(view, 'return-path')) || (m.envelopeFrom ?? '');
  return {
    ID: m.uuid,
    MessageID: mailpitMessageId(m),
    Read: m.seen,
    From: address(view.from),
    To: view.to.map(address),
    Cc: view.cc.map(address),
    Bcc: bccOf(m.envelopeTo, [...view.to, ...view.cc]),
    ReplyTo: view.reply_to.map(address),
    ReturnPath: returnPath,
    Subject: view.subject,
    ListUnsubscribe: listUnsubscribe(view),
    Date: view.date ?? new Date(m.createdAt).toISOString(),
    Tags: m.tags,
    Username: m.username,
    Text: view.text,
    HTML: view.html ?? '',
    Size: m.metadata.size,
    Inline: view.attachments.filter((a) => a.inline).map((a) => attachment(a, m.checksums)),
    Attachments: view.attachments.filter((a) => !a.inline).map((a) => attachment(a, m.checksums)),
  };
}

/** A header name as Go's textproto writes it (Mailpit's keys): each dash-separated word capitalised. */
export const canonicalHeader = (name: string): string => name.toLowerCase().replace(/(^|-)([a-z])/g, (_, dash: string, c: string) => dash + c.toUpperCase());

/** GET /api/v1/message/{ID}/headers: every header's values under its canonical name, names in alphabetical order. */
export function messageHeaders(view: ParsedMailContent): Record<string, string[]> {
  const byName = new Map<string, string[]>();
  for (const h of view.headers) {
    const name = canonicalHeader(h.name);
    const values = byName.get(name);
    if (values) values.push(h.value);
    else byName.set(name, [h.value]);
  }
  return Object.fromEntries([...byName.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** Mailpit's chaos triggers, with its defaults for a stage that has none. */
export interface MailpitTrigger {
  ErrorCode: number;
  Probability: number;
}

export const CHAOS_DEFAULTS = { Sender: 451, Recipient: 451, Authentication: 535 } as const;
export type ChaosStage = keyof typeof CHAOS_DEFAULTS;

const STAGES: Record<ChaosStage, 'sender' | 'recipient' | 'authentication'> = { Sender: 'sender', Recipient: 'recipient', Authentication: 'authentication' };

/** GET /api/v1/chaos: the sandbox's triggers, a stage without one at Mailpit's default code and 0%. */
export function chaosTriggers(chaos: ChaosConfig): Record<ChaosStage, MailpitTrigger> {
  const out = {} as Record<ChaosStage, MailpitTrigger>;
  for (const stage of Object.keys(STAGES) as ChaosStage[]) {
    const t = chaos[STAGES[stage]];
    out[stage] = { ErrorCode: t?.errorCode ?? CHAOS_DEFAULTS[stage], Probability: t?.probability ?? 0 };
  }
  return out;
}

/**
 * PUT /api/v1/chaos: the sandbox's chaos with Mailpit's three triggers set from the body
 * (one left out is reset to its default code and 0%, as Mailpit does) and its other
 * settings (data, delay, disconnects) kept. A string when the body is wrong (the 400's text).
 */
export function chaosFromMailpit(current: ChaosConfig, body: unknown): ChaosConfig | string {
  if (body !== undefined && (typeof body !== 'object' || body === null || Array.isArray(body))) return 'The request body must be a JSON object of triggers.';
  const given = (body ?? {}) as Record<string, unknown>;
  const next: ChaosConfig = { ...current };
  for (const stage of Object.keys(STAGES) as ChaosStage[]) {
    const raw = given[stage] ?? {};
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return `${stage} must be an object with ErrorCode and Probability.`;
    const { ErrorCode: code = 0, Probability: probability = 0 } = raw as Record<string, unknown>;
    if (!Number.isInteger(code) || !Number.isInteger(probability)) return `${stage}: ErrorCode and Probability must be whole numbers.`;
    const errorCode = (code as number) === 0 ? CHAOS_DEFAULTS[stage] : (code as number);
    if (errorCode < 400 || errorCode > 599) return 'error code must be between 400 and 599';
    if ((probability as number) < 0 || (probability as number) > 100) return 'probability must be between 0 and 100';
    next[STAGES[stage]] = { errorCode, probability: probability as number };
  }
  return next;
}
