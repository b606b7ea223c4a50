// One pass over a mail's HTML with the Tokenizer (mail/parse/html-reader.ts: linear whatever
// the nesting) gathering what the content checks and the link list need: images, scripts,
// forms, frames, fonts, links, and how deep and large the markup is.
import { readHtml } from '../mail/parse/html-reader.js';
import { decodeHTML } from 'entities';

export interface HtmlImage {
  src: string;
  alt: string | null;
  width: string | null;
  height: string | null;
  style: string;
}

export interface HtmlFacts {
  bytes: number;
  elements: number;
  attributes: number;
  /** The deepest nesting of elements left open (void elements not counted). */
  depth: number;
  images: HtmlImage[];
  /** http(s) URLs of <a href> and <area href>, as written (entities decoded). */
  anchors: string[];
  scripts: number;
  forms: number;
  frames: string[];
  /** Remote stylesheets and fonts: <link href>, @import and @font-face src URLs. */
  remoteStyles: string[];
  fontFaces: string[];
  /** The distinct element names used (at most MAX_LISTED). */
  tags: string[];
}

/** Elements with no end tag: they never open a level of nesting. */
const VOID = new Set(['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'source', 'track', 'wbr']);
/** The attributes the checks read; others are only counted (an element may have a million). */
const READ = new Set(['src', 'alt', 'width', 'height', 'style', 'href', 'rel']);
/** At most this many of each list are kept: a report stays small whatever the mail. */
const MAX_LISTED = 1000;

const push = <T>(list: T[], item: T) => {
  if (list.length < MAX_LISTED) list.push(item);
};

/** http(s) URLs in CSS `url(...)` and `@import "..."`, for fonts and remote stylesheets. */
function cssUrls(css: string): { imports: string[]; fonts: string[] } {
  const imports: string[] = [];
  const fonts: string[] = [];
  for (const m of css.matchAll(/@import\s+(?:url\(\s*)?["']?(https?:\/\/[^"')\s;]{1,2000})/gi)) push(imports, m[1]!);
  for (const block of css.matchAll(/@font-face\s*\{([^}]{0,5000})\}/gi)) {
    for (const m of block[1]!.matchAll(/url\(\s*["']?(https?:\/\/[^"')\s]{1,2000})/gi)) push(fonts, m[1]!);
  }
  return { imports, fonts };
}

export function scanHtml(html: string): HtmlFacts {
  const facts: HtmlFacts = { bytes: Buffer.byteLength(html), elements: 0, attributes: 0, depth: 0, images: [], anchors: [], scripts: 0, forms: 0, frames: [], remoteStyles: [], fontFaces: [], tags: [] };
  const tags = new Set<string>();
  let depth = 0;
  let tag = '';
  let attrs: Record<string, string> = Object.create(null) as Record<string, string>;
  let inStyle = false;
  const finishTag = () => {
    if (tag === '') return;
    const a = attrs;
    switch (tag) {
      case 'img':
        if (a['src'] !== undefined) push(facts.images, { src: decodeHTML(a['src']).trim(), alt: a['alt'] ?? null, width: a['width'] ?? null, height: a['height'] ?? null, style: a['style'] ?? '' });
        break;
      case 'a':
      case 'area':
        if (a['href'] !== undefined) {
          const href = decodeHTML(a['href']).trim();
          if (/^https?:\/\//i.test(href)) push(facts.anchors, href);
        }
        break;
      case 'script':
        facts.scripts++;
        break;
      case 'form':
        facts.forms++;
        break;
      case 'iframe':
      case 'frame':
      case 'embed':
      case 'object':
        push(facts.frames, tag);
        break;
      case 'link':
        if (/stylesheet|preload|font/i.test(a['rel'] ?? '') && /^https?:\/\//i.test((a['href'] ?? '').trim())) push(facts.remoteStyles, decodeHTML(a['href']!).trim());
        break;
    }
    if (a['style'] !== undefined) {
      const { imports } = cssUrls(a['style']);
      for (const u of imports) push(facts.remoteStyles, u);
    }
    tag = '';
    attrs = Object.create(null) as Record<string, string>;
  };
  readHtml(html, {
    open(name) {
      finishTag();
      facts.elements++;
      tag = name;
      if (tags.size < MAX_LISTED && !tags.has(name)) {
        tags.add(name);
        facts.tags.push(name);
      }
      if (name === 'style') inStyle = true;
      if (!VOID.has(name)) {
        depth++;
        if (depth > facts.depth) facts.depth = depth;
      }
    },
    attribute(name, value) {
      facts.attributes++;
      // The first of a repeated attribute counts, as browsers read it.
      if (READ.has(name) && !(name in attrs)) attrs[name] = value;
    },
    text(text) {
      finishTag();
      if (inStyle) {
        const { imports, fonts } = cssUrls(text);
        for (const u of imports) push(facts.remoteStyles, u);
        for (const u of fonts) push(facts.fontFaces, u);
      }
    },
    close(name) {
      finishTag();
      if (name === 'style') inStyle = false;
      if (!VOID.has(name) && depth > 0) depth--;
    },
  });
  finishTag();
  return facts;
}
