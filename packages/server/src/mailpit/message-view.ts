// What the Mailpit-compatible API answers from a mail's parsed view (the JSON the parser's
// worker serialised, mail/parse/parsed-view.ts): the message summary, its headers, or the HTML
// or text that /view/{ID}.html and .txt render. A view holds the whole text and HTML, up to
// about twice the message: one up to INLINE_BYTES is reshaped on the event loop (a fraction
// of a millisecond), a larger one in a worker thread of its own (message-worker.ts).
import type { ParsedMailContent } from '@temp-inbox/api';
import { moduleWorkerUrl } from '../workers/module-worker.js';
import { runOneShot } from '../workers/one-shot.js';
import { messageHeaders, messageSummary, type MailpitMail } from './shapes.js';

export const INLINE_BYTES = 64 * 1024;

export type ViewKind = 'summary' | 'headers' | 'html' | 'text';

export interface ViewJob {
  kind: ViewKind;
  mail: MailpitMail;
  /** For html: the URL an attachment's id is appended to for its download, where its cid: references point. */
  partBase?: string;
}

const escapeAttr = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

/** cid:<Content-ID> references of the HTML pointed at the parts' downloads, as Mailpit's view does. */
function linkInlineParts(html: string, view: ParsedMailContent, base: string | undefined): string {
  const urls: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const a of view.attachments) if (a.content_id && base !== undefined) urls[a.content_id] = `${base}${a.id}`;
  if (Object.keys(urls).length === 0) return html;
  return html.replace(/(["'(])cid:([^"')\s]{1,998})(["')])/gi, (whole, open: string, id: string, close: string) => {
    const url = urls[id];
    return url === undefined ? whole : `${open}${escapeAttr(url)}${close}`;
  });
}

/**
 * The answer's bytes: JSON for summary and headers; for html and text a first byte saying
 * whether the mail has that part ('1') or not ('0'), then the part.
 */
export function reshape(job: ViewJob, content: Buffer): string {
  const view = JSON.parse(content.toString('utf8')) as ParsedMailContent;
  switch (job.kind) {
    case 'summary':
      return JSON.stringify(messageSummary(job.mail, view));
    case 'headers':
      return JSON.stringify(messageHeaders(view));
    case 'html':
      return view.html === null ? '0' : `1${linkInlineParts(view.html, view, job.partBase)}`;
    case 'text':
      return `1${view.text}`;
  }
}

export async function viewAnswer(job: ViewJob, content: Buffer): Promise<Buffer> {
  if (content.length <= INLINE_BYTES) return Buffer.from(reshape(job, content));
  return runOneShot(moduleWorkerUrl(import.meta.url, 'message-worker'), job, content);
}
