// What the parse of one message gives the mail service (ParsedMessage), built from a
// worker's answer, or, when nothing could be read, a message described by nothing.
import type { MailMetadata } from '@temp-inbox/api';
import { NO_ATTACHMENTS, type AttachmentFacts } from './attachment-facts.js';
import { buildMetadata, partialMetadataJson } from './metadata.js';
import type { WorkerItem, WorkerResult } from './parse-worker.js';

export interface ParsedAttachment {
  filename: string;
  contentType: string;
  content: Buffer;
}

export interface ParsedMessage {
  /** Metadata of the message, every field bounded; `size` is 0 (the caller sets it per stored copy). Read from metadataJson when asked for. */
  readonly metadata: MailMetadata;
  /** The same metadata's JSON without `size` (metadata.ts partialMetadataJson), which delivery completes per stored copy (deliveryMetadata). */
  metadataJson: string;
  /** The From: address when it is a single mailbox (not a group). */
  fromAddress: string | undefined;
  /** Message-ID header including angle brackets, or ''. */
  messageId: string;
  /** Decoded bytes of exactly the attachments metadata.attachments lists, in that order. */
  attachments: ParsedAttachment[];
  /** The parse ran out of its budget or failed: only the header block was read. */
  degraded: boolean;
  /** What search finds the mail by: the words of its subject, people and decoded text, each once (search-text.ts). */
  searchText: string;
  /** The tags its X-Tags header names, cleaned and bounded (metadata.ts headerTags); a sandbox's mail is given them. */
  tags: string[];
  /** Every attachment's size, extension and first bytes (attachment-facts.ts), for the attachment policy; none when degraded. */
  facts: AttachmentFacts;
}

/** The metadata object of a partial JSON (delivery never needs it; tests and tools do). */
function metadataOf(json: string): MailMetadata {
  return { ...(JSON.parse(json) as Omit<MailMetadata, 'size'>), size: 0 };
}

export function parsedOf(r: WorkerResult, it: WorkerItem): ParsedMessage {
  return {
    get metadata() {
      return metadataOf(it.metadataJson);
    },
    metadataJson: it.metadataJson,
    fromAddress: it.fromAddress,
    messageId: it.messageId,
    attachments: it.attachments.map((a) => ({ filename: a.filename, contentType: a.contentType, content: Buffer.from(r.contents, a.offset, a.length) })),
    degraded: it.degraded,
    searchText: it.searchText,
    tags: it.tags,
    facts: it.facts,
  };
}

/** Metadata of a message nothing could be read from. */
export function nothing(): ParsedMessage {
  const metadata = buildMetadata(undefined, 0);
  return { metadata, metadataJson: partialMetadataJson(metadata), fromAddress: undefined, messageId: '', attachments: [], degraded: true, searchText: '', tags: [], facts: NO_ATTACHMENTS };
}
