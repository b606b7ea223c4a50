// The content checks (docs/api.md "Deliverability report"): what in a mail's HTML and
// headers makes clients hide, clip or distrust it. Pure; runs in the report's worker.
import type { HeaderField, ReportFinding } from '@temp-inbox/api';
import { finding, headerValues } from './findings.js';
import type { HtmlFacts } from './html-scan.js';

/** Gmail shows "[Message clipped]" past this much HTML. */
export const GMAIL_CLIP_BYTES = 102 * 1024;

/** Link shorteners spam filters distrust: they hide where a link goes. */
const SHORTENERS = new Set([
  'bit.ly', 'bitly.com', 'tinyurl.com', 't.co', 'goo.gl', 'ow.ly', 'is.gd', 'buff.ly', 'rebrand.ly', 'cutt.ly', 'shorturl.at',
  'tiny.cc', 'rb.gy', 'bl.ink', 't.ly', 's.id', 'lnkd.in', 'v.gd', 'soo.gd', 'clck.ru', 'shorte.st', 'adf.ly', 'tr.im', 'x.co',
]);

const hostOf = (url: string): string | null => {
  try {
    return new URL(url).hostname.toLowerCase();
  } catch {
    return null;
  }
};

/** A pixel: an image of at most 1×1 (attributes or style), or one hidden by its style. */
function isTrackingPixel(img: HtmlFacts['images'][number]): boolean {
  const tiny = (v: string | null) => v !== null && /^\s*[01](px)?\s*$/i.test(v);
  const style = img.style.toLowerCase().replace(/\s+/g, '');
  const styleTiny = /(^|;)width:[01](px)?(;|$)/.test(style) && /(^|;)height:[01](px)?(;|$)/.test(style);
  return /^https?:/i.test(img.src) && ((tiny(img.width) && tiny(img.height)) || styleTiny || /display:none|visibility:hidden/.test(style));
}

const list = (items: readonly string[], max = 3) => items.slice(0, max).join(', ') + (items.length > max ? `, and ${items.length - max} more` : '');

export interface ContentInput {
  html: string | null;
  facts: HtmlFacts | null;
  headers: readonly HeaderField[];
  /** The message has a text/plain part of its own (not text made from its HTML). */
  hasTextPart: boolean;
}

export function contentFindings({ html, facts, headers, hasTextPart }: ContentInput): ReportFinding[] {
  const out: ReportFinding[] = [];
  if (html === null || facts === null) {
    out.push(finding('text-part', 'pass', 'The mail is plain text: every client shows it as sent.'));
  } else {
    const noAlt = facts.images.filter((i) => i.alt === null && !isTrackingPixel(i));
    out.push(noAlt.length === 0 ? finding('img-alt', 'pass', 'Every image has an alt text.') : finding('img-alt', 'warn', `${noAlt.length} image(s) have no alt attribute: clients that block images show nothing in their place, and screen readers read the file name.`, list(noAlt.map((i) => i.src))));
    out.push(facts.scripts === 0 ? finding('script', 'pass', 'No <script>.') : finding('script', 'fail', `${facts.scripts} <script> element(s): every mail client removes scripts, and spam filters score them.`));
    out.push(facts.forms === 0 ? finding('form', 'pass', 'No <form>.') : finding('form', 'warn', `${facts.forms} <form> element(s): many clients disable forms or warn before sending them; link to a page instead.`));
    out.push(facts.frames.length === 0 ? finding('iframe', 'pass', 'No <iframe>, <embed> or <object>.') : finding('iframe', 'fail', `${facts.frames.length} embedded frame(s) or object(s): mail clients remove them.`, list(facts.frames)));
    const fonts = [...facts.fontFaces, ...facts.remoteStyles];
    out.push(fonts.length === 0 ? finding('remote-fonts', 'pass', 'No remote fonts or stylesheets.') : finding('remote-fonts', 'warn', `${fonts.length} remote font(s) or stylesheet(s): most clients do not load them (Gmail, Outlook); give a fallback font.`, list(fonts)));
    const urls = [...facts.anchors, ...facts.images.map((i) => i.src)];
    const short = urls.filter((u) => SHORTENERS.has(hostOf(u) ?? ''));
    out.push(short.length === 0 ? finding('url-shortener', 'pass', 'No link shorteners.') : finding('url-shortener', 'warn', `${short.length} link(s) through a URL shortener: spam filters distrust links that hide where they go.`, list(short)));
    const pixels = facts.images.filter(isTrackingPixel);
    out.push(pixels.length === 0 ? finding('tracking-pixel', 'pass', 'No tracking pixel.') : finding('tracking-pixel', 'warn', `${pixels.length} tracking pixel(s): Apple Mail and Gmail load them through a proxy, so opens they report are not the reader's.`, list(pixels.map((p) => p.src))));
    const kb = Math.round(facts.bytes / 102.4) / 10;
    out.push(
      facts.bytes > GMAIL_CLIP_BYTES
        ? finding('html-size', 'fail', `The HTML is ${kb} KiB: Gmail clips a message past 102 KiB and hides the rest (the unsubscribe link often with it).`)
        : finding('html-size', facts.bytes > GMAIL_CLIP_BYTES * 0.9 ? 'warn' : 'pass', `The HTML is ${kb} KiB (Gmail clips past 102 KiB).`),
    );
    out.push(hasTextPart ? finding('text-part', 'pass', 'The mail has a plain-text part beside its HTML.') : finding('text-part', 'warn', 'The mail has HTML and no plain-text part: some spam filters score that, and text-only clients show nothing useful.'));
  }
  const unsub = headerValues(headers, 'List-Unsubscribe');
  const post = headerValues(headers, 'List-Unsubscribe-Post');
  out.push(unsub.length > 0 ? finding('list-unsubscribe', 'pass', 'List-Unsubscribe is present.', unsub[0]) : finding('list-unsubscribe', 'warn', 'No List-Unsubscribe header: Gmail and Yahoo require one of bulk senders, and clients show an unsubscribe button from it.'));
  out.push(
    post.some((v) => /^\s*List-Unsubscribe=One-Click\s*$/i.test(v))
      ? finding('list-unsubscribe-post', 'pass', 'List-Unsubscribe-Post: List-Unsubscribe=One-Click is present (RFC 8058).')
      : finding('list-unsubscribe-post', 'warn', 'No "List-Unsubscribe-Post: List-Unsubscribe=One-Click" header: one-click unsubscribe (RFC 8058) needs it.', post[0]),
  );
  return out;
}
