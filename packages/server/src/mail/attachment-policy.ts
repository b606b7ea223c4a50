// The attachment policy applied at DATA (docs/decisions.md "Attachment policy"): a message
// with an attachment larger than ATTACHMENT_MAX_BYTES, or one whose file name has a refused
// extension (ATTACHMENT_REFUSED_EXTENSIONS), or whose decoded bytes begin as a Windows (PE) or
// ELF executable does (ATTACHMENT_REFUSE_EXECUTABLES), is refused whole and nothing is stored.
// It reads the facts the parse worker gathered (parse/attachment-facts.ts), never the message.
import { AppError } from '../domain/errors.js';
import type { AttachmentFacts } from './parse/attachment-facts.js';

export interface AttachmentPolicy {
  /** Largest decoded attachment taken, in bytes; 0 = no limit. */
  maxBytes: number;
  /** Lower-cased extensions, without the dot, of file names refused. */
  refusedExtensions: ReadonlySet<string>;
  /** Refuse attachments whose bytes begin as a PE ("MZ") or ELF executable, whatever their name. */
  refuseExecutables: boolean;
}

/** Why a message was refused: the label of temp_inbox_smtp_attachments_refused_total. */
export type AttachmentRefusalReason = 'size' | 'extension' | 'content';

export { DEFAULT_REFUSED_EXTENSIONS } from '../domain/attachment-types.js';

/** A message refused by the policy; the SMTP side answers 552 5.3.4 (size) or 552 5.7.0 (type) with its message. */
export class AttachmentRefusedError extends AppError {
  constructor(
    readonly reason: AttachmentRefusalReason,
    message: string,
  ) {
    super(reason === 'size' ? 'too_large' : 'unsupported_media_type', message);
  }
}

const quoted = (filename: string) => (filename === '' ? 'an attachment' : `attachment "${filename.replace(/[\r\n"\\]/g, '_')}"`);

/** The policy's refusal of a message with these attachments, or undefined when it may be stored. */
export function refusalOf(policy: AttachmentPolicy | undefined, facts: AttachmentFacts): AttachmentRefusedError | undefined {
  if (!policy || facts.count === 0) return undefined;
  if (policy.maxBytes > 0 && facts.largest.bytes > policy.maxBytes) {
    return new AttachmentRefusedError('size', `Message refused: ${quoted(facts.largest.filename)} is ${facts.largest.bytes} bytes, over this server's limit of ${policy.maxBytes} bytes per attachment`);
  }
  if (policy.refusedExtensions.size > 0) {
    const refused = facts.extensions.find((e) => policy.refusedExtensions.has(e.ext));
    if (refused) return new AttachmentRefusedError('extension', `Message refused: ${quoted(refused.filename)} is of a type this server does not accept (.${refused.ext})`);
    if (facts.extensionsCut) return new AttachmentRefusedError('extension', 'Message refused: its attachments have too many different file types to check');
  }
  if (policy.refuseExecutables && facts.executable) {
    const kind = facts.executable.kind === 'pe' ? 'a Windows program (PE)' : 'a Linux program (ELF)';
    return new AttachmentRefusedError('content', `Message refused: ${quoted(facts.executable.filename)} is ${kind}, which this server does not accept`);
  }
  return undefined;
}
