// Pulls what test automation wants out of a decoded message: likely verification
// codes and the links, plus a plain-text rendering of HTML for previews.

import { decodeHTML } from 'entities';
import { readHtml } from './html-reader.js';

export { extractCodes } from './codes.js';
export { extractLinks, SCAN_CHARS } from './links.js';

/** HTML's white space (not U+00A0, which \s would take too). */
const HTML_SPACE_RE = /[ \t\n\r\f]+/g;
/** Elements whose end is the end of a line. */
const LINE_ENDS = new Set(['p', 'div', 'tr', 'li', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'table', 'ul', 'ol', 'blockquote']);
/** Elements whose content is not shown: hidden up to their closer (kept when there is none). */
const HIDDEN = ['script', 'style', 'head'];

/**
 * The text of HTML as a browser lays it out: a line break in the source is a space,
 * as in the browser ("736</td>\n<td>205" shows as "736 205" in one row), and lines
 * end only at <br> and the end of a block. (Entities such as &nbsp; are decoded
 * after, so they stay.)
 */
export function htmlToText(html: string): string {
  const lower = html.toLowerCase();
  const lastCloser = new Map(HIDDEN.map((tag) => [tag, lower.lastIndexOf(`</${tag}`)]));
  let out = '';
  let hidden: string | undefined;
  readHtml(html, {
    text(t) {
      if (hidden === undefined) out += t.replace(HTML_SPACE_RE, ' ');
    },
    open(name, end) {
      if (hidden !== undefined) return;
      const closer = lastCloser.get(name);
      if (closer !== undefined && closer > end) hidden = name;
      out += name === 'br' ? '\n' : ' ';
    },
    close(name) {
      if (hidden !== undefined) {
        if (name === hidden) hidden = undefined;
        return;
      }
      out += name === 'br' ? '\n' : LINE_ENDS.has(name) ? '\n' : ' ';
    },
  });
  return decodeHTML(out);
}

/** `text` with whitespace runs collapsed, read in slices only until `need` characters are out. */
function flatPrefix(text: string, need: number): string {
  let out = '';
  for (let at = 0; at < text.length && out.length < need; at += 4096) {
    const part = text.slice(at, at + 4096).replace(/\s+/g, ' ');
    out += out.endsWith(' ') && part.startsWith(' ') ? part.slice(1) : part;
  }
  return out;
}

export function makePreview(text: string, max = 200): string {
  // max + 3: past the leading and a trailing space, more than max characters prove the cut is needed.
  const flat = flatPrefix(text, max + 3).trim();
  if (flat.length <= max) return flat;
  // Never cut between the two halves of a surrogate pair (an emoji, say).
  const end = /[\ud800-\udbff]/.test(flat[max - 1]!) ? max - 1 : max;
  return flat.slice(0, end).replace(/\s\S*$/, '') + '…';
}
