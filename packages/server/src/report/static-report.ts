// The sections of a report that need only the message (its parsed view and raw bytes):
// HTML compatibility, content, sender rules and the list of links. Pure; runs in the
// report's worker (report-worker.ts), never on the event loop.
import type { HtmlSection, LinkEntry, MailAuth, ParsedMailContent, PlainSection } from '@temp-inbox/api';
import { contentFindings } from './content.js';
import { worst } from './findings.js';
import { htmlSection } from './html-compat.js';
import { scanHtml } from './html-scan.js';
import { senderFindings } from './sender-rules.js';

/** The most links a report lists (and checks). */
export const MAX_LINKS = 200;

export interface StaticSections {
  html: HtmlSection;
  content: PlainSection;
  sender: PlainSection;
  links: LinkEntry[];
  linksTruncated: boolean;
  /** Why the message could not be read (every section unavailable, the links unlisted); absent when it was. */
  unread?: string;
}

export type ReportContent = ParsedMailContent & { auth?: MailAuth };

/** A text/plain part of its own beside the HTML: a part header naming it (an approximation that a text attachment also meets). */
const hasTextPart = (raw: Buffer) => /^content-type:[ \t]*text\/plain/im.test(raw.toString('latin1'));

export function staticSections(content: ReportContent, raw: Buffer): StaticSections {
  const facts = content.html === null ? null : scanHtml(content.html);
  const contentList = contentFindings({ html: content.html, facts, headers: content.headers, hasTextPart: content.html === null || hasTextPart(raw) });
  const senderList = senderFindings({ headers: content.headers, auth: content.auth });
  const seen = new Set<string>();
  const links: LinkEntry[] = [];
  let linksTruncated = false;
  const add = (url: string, kind: LinkEntry['kind']) => {
    if (!/^https?:\/\//i.test(url) || seen.has(url)) return;
    seen.add(url);
    if (links.length < MAX_LINKS) links.push({ url, kind });
    else linksTruncated = true;
  };
  for (const url of facts?.anchors ?? []) add(url, 'link');
  for (const url of content.links) add(url, 'link');
  for (const img of facts?.images ?? []) add(img.src, 'image');
  return {
    html: htmlSection(content.html, facts),
    content: { verdict: worst(contentList), findings: contentList },
    sender: { verdict: worst(senderList), findings: senderList },
    links,
    linksTruncated,
  };
}
