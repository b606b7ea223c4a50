// Which link of a mail a test most likely wants: a verification, sign-in or reset
// link, before any other, and never an unsubscribe, privacy, social or tracking link
// unless the caller asks for it by name (`contains`). Pure; imports nothing: the client
// carries a copy (its scripts/api-types.mjs), the server's MCP tools use it as it is.

/** Unsubscribe and account-settings links, anywhere in the URL or its anchor text. */
const UNWANTED = /unsubscribe|opt[-_ ]?out|list-manage|email[-_ ]?preferences|manage[-_ ]?(your[-_ ]?)?(e-?mail[-_ ]?|notification[-_ ]?)?(preferences|subscriptions?|settings)|notification[-_ ]?settings|view[-_ ]?(it[-_ ]?)?in[-_ ]?(your[-_ ]?)?browser/i;
/** Legal pages, in the URL's path or the anchor text. */
const LEGAL = /privacy|terms|legal|cookie|imprint|impressum/i;
/** Open and click tracking: a path segment or host label that says so, or an image. */
const TRACKING = /(^|[./_-])(track|tracking|tracker|pixel|beacon|analytics)([./_?=-]|$)|\.(gif|png|jpe?g|webp|svg)$/i;
const SOCIAL_HOSTS = [
  'facebook.com', 'fb.com', 'fb.me', 'twitter.com', 'x.com', 't.co', 'linkedin.com', 'lnkd.in', 'instagram.com', 'youtube.com', 'youtu.be',
  'tiktok.com', 'pinterest.com', 'reddit.com', 'discord.gg', 'discord.com', 'threads.net', 'mastodon.social', 'bsky.app', 'wa.me', 'whatsapp.com', 't.me',
];
/** What a verification, sign-in or reset link says, in its URL or its anchor text. */
const WANTED = /verif|confirm|activat|validat|magic|sign[-_ ]?(in|up)|log[-_ ]?in|auth|reset|password|passwd|recover|invit|accept|one[-_ ]?time|otp|token|code|join|complete[-_ ]?(your[-_ ]?)?registration/i;

/** How much of the HTML is read for anchor texts (the link list itself is never cut). */
const MAX_HTML_SCANNED = 2 * 1024 * 1024;

export type LinkKind = 'preferred' | 'other' | 'unwanted';

/** The kind of one link, given its anchor text ('' when unknown). */
export function classifyLink(link: string, anchorText = ''): LinkKind {
  let url: URL;
  try {
    url = new URL(link);
  } catch {
    return 'unwanted';
  }
  const host = url.hostname.toLowerCase().replace(/^www\./, '');
  if (SOCIAL_HOSTS.some((h) => host === h || host.endsWith(`.${h}`))) return 'unwanted';
  if (UNWANTED.test(link) || UNWANTED.test(anchorText)) return 'unwanted';
  if (LEGAL.test(url.pathname) || LEGAL.test(anchorText)) return 'unwanted';
  const wantedText = WANTED.test(anchorText);
  // A tracking redirect that wraps the confirmation link is still the one to follow
  // when its anchor text says so ("Confirm your email" on a click-tracking URL).
  if (!wantedText && (TRACKING.test(host) || url.pathname.split('/').some((segment) => TRACKING.test(segment)))) return 'unwanted';
  if (wantedText || WANTED.test(url.pathname + url.search)) return 'preferred';
  return 'other';
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

function decodeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-f]{1,6}|#[0-9]{1,7}|[a-z]{2,6});/gi, (whole, e: string) => {
    if (e[0] === '#') {
      const code = e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return ENTITIES[e.toLowerCase()] ?? whole;
  });
}

/** The text of each <a href> of the HTML, by its (entity-decoded) href. Linear in the HTML's length. */
export function anchorTexts(html: string | null): Map<string, string> {
  const texts = new Map<string, string>();
  if (!html) return texts;
  const source = html.length > MAX_HTML_SCANNED ? html.slice(0, MAX_HTML_SCANNED) : html;
  const lower = source.toLowerCase();
  let at = 0;
  // Where the next "</a" is at or after `at` (-1: none left); searched again only once passed, so the scan stays linear.
  let close = -2;
  while ((at = lower.indexOf('<a', at)) !== -1) {
    const tagEnd = lower.indexOf('>', at);
    if (tagEnd === -1) break;
    const tag = source.slice(at, tagEnd + 1);
    at = tagEnd + 1;
    if (!/^<a[\s/]/i.test(tag)) continue;
    const href = /\shref\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))/i.exec(tag);
    if (!href) continue;
    if (close !== -1 && close < at) close = lower.indexOf('</a', at);
    // Anchor texts are short; at most 1,000 characters of one are read.
    const inner = source.slice(at, Math.min(close === -1 ? source.length : close, at + 1000));
    const text = decodeEntities(inner.replace(/<[^>]*>/g, ' '))
      .replace(/\s+/g, ' ')
      .trim();
    const url = decodeEntities((href[1] ?? href[2] ?? href[3] ?? '').trim());
    // The same link may appear several times (a button and a text link): their texts are joined, up to 500 characters.
    const before = texts.get(url);
    if (before === undefined) texts.set(url, text.slice(0, 500));
    else if (before.length < 500 && text) texts.set(url, `${before} ${text}`.slice(0, 500));
  }
  return texts;
}

/** A `contains` filter: a string is a case-insensitive substring, a RegExp is tested as is. */
export type LinkMatcher = string | RegExp;

function matches(link: string, contains: LinkMatcher): boolean {
  if (typeof contains === 'string') return link.toLowerCase().includes(contains.toLowerCase());
  contains.lastIndex = 0;
  return contains.test(link);
}

/**
 * The mail's links a waitForLink may return, best first: verification, sign-in and
 * reset links, then other links, in the mail's order within each. Unsubscribe,
 * privacy, social and tracking links are left out, unless `contains` names them:
 * with `contains`, every link it matches is a candidate (those unwanted last).
 */
export function rankLinks(links: readonly string[], html: string | null, contains?: LinkMatcher): string[] {
  const texts = anchorTexts(html);
  const order: Record<LinkKind, number> = { preferred: 0, other: 1, unwanted: 2 };
  return links
    .filter((link) => contains === undefined || matches(link, contains))
    .map((link, index) => ({ link, index, kind: classifyLink(link, texts.get(link) ?? '') }))
    .filter((c) => contains !== undefined || c.kind !== 'unwanted')
    .sort((a, b) => order[a.kind] - order[b.kind] || a.index - b.index)
    .map((c) => c.link);
}
