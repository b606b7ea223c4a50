// A mail's HTML made safe to put in the reader's frame: nothing in it may reach the
// network before the reader asks (Load), because a request, a DNS look-up or a TLS
// handshake tells the sender the mail was opened. The frame's own policy is not
// enough: Chromium pre-connects to an <iframe src> it then refuses. So every construct
// that could load something is taken out here, on a parsed copy (DOMParser documents
// load nothing), before the frame sees the markup. After Load, remote images and
// styles stay (the frame's policy still allows only those); frames, objects, embeds,
// media, <base>, <meta> (refresh), preloads, form targets, pings and SVG references
// never come back.

/** What prepareHtml made of a mail's HTML. */
export interface PreparedHtml {
  /** The mail's document (<html>…</html>), without anything that loads what the mode does not allow. */
  html: string;
  /** Whether something that Load would show (remote images, styles, fonts) was taken out. */
  blocked: boolean;
}

/** Elements that load, run or redirect something of their own: always removed, with their content. */
const REMOVED = [
  'script', 'iframe', 'frame', 'frameset', 'object', 'embed', 'applet', 'portal', 'fencedframe', 'base', 'meta', 'template',
  'noembed', 'noframes', 'param',
  // SMIL can set an SVG element's href (or any attribute) to a URL after the markup was checked.
  'set', 'animate', 'animatemotion', 'animatetransform', 'animatecolor', 'discard',
].join(',');

/** Attributes that only ever name something to fetch or send to: always removed. */
const ALWAYS_DROPPED = new Set(['ping', 'action', 'formaction', 'manifest', 'lowsrc', 'dynsrc', 'longdesc', 'codebase', 'archive', 'classid', 'data', 'code', 'profile', 'imagesrcset', 'imagesizes', 'icon', 'attributionsrc']);

/** CSS that fetches: url(), image-set(), image(), cross-fade(), element(), src(). */
const CSS_FETCH_RE = /\b(?:url|image|image-set|-webkit-image-set|cross-fade|-webkit-cross-fade|element|src)\s*\(/i;
/** url("data:…") and url(#id), quoted or not: an inline image or a reference inside the mail loads nothing. */
const CSS_LOCAL_URL_RE = /url\(\s*(?:"(?:data:|#)(?:[^"\\]|\\.)*"|'(?:data:|#)(?:[^'\\]|\\.)*'|(?:data:|#)[^)"'\s]*)\s*\)/gi;
/** An absolute http(s) or protocol-relative URL: the only remote kind Load lets through (the frame's policy agrees). */
const REMOTE_URL_RE = /^\s*(?:https?:)?\/\//i;
const DATA_URL_RE = /^\s*data:/i;

type Mode = { remote: boolean };

/** CSS escapes decoded ("\\75 rl(" is "url("), as a custom property's raw value keeps them. */
const unescapeCss = (value: string) =>
  value.replace(/\\([0-9a-f]{1,6})[ \t\n\r\f]?|\\([^\n\r\f])/gi, (_, hex: string | undefined, char: string | undefined) => (hex ? String.fromCodePoint(Math.min(parseInt(hex, 16) || 0xfffd, 0x10ffff)) : char!));

/** Whether a CSS value fetches anything other than inline data. */
function cssFetches(value: string): boolean {
  return CSS_FETCH_RE.test(unescapeCss(value).replace(CSS_LOCAL_URL_RE, ''));
}

/** Removes every declaration that fetches from a declaration block; true when one was removed. */
function stripDeclarations(style: CSSStyleDeclaration): boolean {
  const names: string[] = [];
  for (let i = 0; i < style.length; i++) names.push(style.item(i));
  let removed = false;
  for (const name of names) {
    if (!cssFetches(style.getPropertyValue(name))) continue;
    style.removeProperty(name);
    removed = true;
  }
  return removed;
}

/** Strips fetching declarations and @font-face from a list of rules, at every depth; true when something was removed. */
function stripRules(rules: CSSRuleList, deleteRule: (index: number) => void): boolean {
  let removed = false;
  for (let i = rules.length - 1; i >= 0; i--) {
    const rule = rules[i]!;
    if (rule instanceof CSSFontFaceRule) {
      deleteRule(i);
      removed = true;
      continue;
    }
    if ('style' in rule && rule.style instanceof CSSStyleDeclaration && stripDeclarations(rule.style)) removed = true;
    // Grouping rules (@media, @supports, @layer, @container) and nested style rules.
    if ('cssRules' in rule && rule.cssRules instanceof CSSRuleList && 'deleteRule' in rule && typeof rule.deleteRule === 'function') {
      const group = rule as CSSGroupingRule;
      if (stripRules(group.cssRules, (j) => group.deleteRule(j))) removed = true;
    }
  }
  return removed;
}

/**
 * A stylesheet's text without anything that fetches, read by the browser's own CSS
 * parser (so escapes, comments and odd spacing hide nothing). A constructed sheet
 * drops @import and loads nothing, as no document uses it.
 */
function localCss(text: string): { css: string; removed: boolean } {
  const sheet = new CSSStyleSheet();
  try {
    sheet.replaceSync(text);
  } catch {
    return { css: '', removed: true };
  }
  const removed = stripRules(sheet.cssRules, (i) => sheet.deleteRule(i)) || /@import/i.test(unescapeCss(text));
  return { css: Array.from(sheet.cssRules, (r) => r.cssText).join('\n'), removed };
}

/** Whether an element is SVG's (its href attributes reference documents and images). */
const isSvg = (el: Element) => el.namespaceURI === 'http://www.w3.org/2000/svg';

/** Whether Load may let this URL attribute through: an image, or the background of an element. */
function isImageAttribute(el: Element, name: string): boolean {
  const tag = el.localName;
  if (name === 'background') return true;
  if (name === 'poster') return tag === 'video';
  if (name === 'src') return tag === 'img' || (tag === 'input' && el.getAttribute('type')?.toLowerCase() === 'image');
  if (name === 'srcset') return tag === 'img' || (tag === 'source' && el.parentElement?.localName === 'picture');
  return (name === 'href' || name === 'xlink:href') && isSvg(el) && tag === 'image';
}

/** Cleans one element's attributes; true when something Load would show was removed. */
function cleanAttributes(el: Element, mode: Mode): boolean {
  let blocked = false;
  for (const attr of Array.from(el.attributes)) {
    const name = attr.name.toLowerCase();
    const value = attr.value;
    if (name === 'style') {
      if (mode.remote) continue;
      const style = (el as Partial<ElementCSSInlineStyle>).style;
      if (style instanceof CSSStyleDeclaration ? stripDeclarations(style) : cssFetches(value)) blocked = true;
      // What CSSOM could not read stays out too.
      if (cssFetches(el.getAttribute('style') ?? '')) el.removeAttribute('style');
      continue;
    }
    // Event handlers never run in the frame (no scripts); they go all the same.
    if (ALWAYS_DROPPED.has(name) || name.startsWith('on')) {
      el.removeAttribute(attr.name);
      continue;
    }
    const href = name === 'href' || name.endsWith(':href');
    if (href && !isSvg(el)) continue; // <a href>, <area href>: a link to click loads nothing.
    if (href && isSvg(el) && el.localName === 'a') continue;
    if (href && value.trim().startsWith('#') && !(isSvg(el) && el.localName === 'image')) continue; // a reference inside the mail
    if (name === 'src' || name === 'srcset' || name === 'poster' || name === 'background' || href) {
      if (DATA_URL_RE.test(value) && name !== 'srcset') continue;
      const image = isImageAttribute(el, name);
      if (mode.remote && image && (name === 'srcset' || REMOTE_URL_RE.test(value))) continue;
      el.removeAttribute(attr.name);
      if (image && (name === 'srcset' || REMOTE_URL_RE.test(value))) blocked = true;
      continue;
    }
    // SVG presentation attributes (fill="url(…)", filter, mask, marker) may reference another document.
    if (cssFetches(value)) el.removeAttribute(attr.name);
  }
  return blocked;
}

/** One pass over a parsed document; true when something Load would show was removed. */
function cleanDocument(doc: Document, mode: Mode): boolean {
  let blocked = false;
  for (const el of Array.from(doc.querySelectorAll(REMOVED))) el.remove();
  for (const link of Array.from(doc.querySelectorAll('link'))) {
    const stylesheet = /(?:^|\s)stylesheet(?:\s|$)/i.test(link.getAttribute('rel') ?? '') && REMOTE_URL_RE.test(link.getAttribute('href') ?? '');
    if (stylesheet) blocked = true;
    if (!(mode.remote && stylesheet)) link.remove();
  }
  if (!mode.remote) {
    for (const style of Array.from(doc.querySelectorAll('style'))) {
      const { css, removed } = localCss(style.textContent ?? '');
      if (removed) blocked = true;
      style.textContent = css;
    }
  }
  for (const el of Array.from(doc.querySelectorAll('*'))) if (cleanAttributes(el, mode)) blocked = true;
  return blocked;
}

const serialize = (doc: Document) => doc.documentElement.outerHTML;

/** Passes over the markup until parsing what it wrote gives it back (markup that changes when parsed again hides nothing then). */
const MAX_PASSES = 4;

/** The mail's HTML for the frame: with remote images and styles only when `remote` (Load), and never anything else that loads. */
export function prepareHtml(html: string, remote: boolean): PreparedHtml {
  const parser = new DOMParser();
  let markup = html;
  let blocked = false;
  for (let pass = 0; pass < MAX_PASSES; pass++) {
    const doc = parser.parseFromString(markup, 'text/html');
    if (cleanDocument(doc, { remote })) blocked = true;
    const next = serialize(doc);
    if (next === markup) return { html: next, blocked };
    markup = next;
  }
  // Still changing: show the text alone rather than markup that is not understood.
  const text = parser.parseFromString(markup, 'text/html').body?.textContent ?? '';
  const p = document.createElement('pre');
  p.textContent = text;
  return { html: p.outerHTML, blocked };
}
