// The message of the MailHog-compatible API (docs/api.md "Moving from Mailpit or MailHog"),
// field for field as MailHog's API sends it: ID, From and To as paths (Relays, Mailbox,
// Domain, Params), Content with its headers, undecoded body and size, MIME with each part
// (and a multipart part's own parts), Raw with the envelope and the data, Created. The MIME
// structure is read from the raw message as MailHog reads it (boundaries split, each part's
// headers and body as written, nothing decoded), bounded in parts and depth. Pure: the
// worker that reshapes a large message (message-worker.ts) uses it too.

/** Parts listed per multipart body at most (the rest are left out). */
export const MAX_PARTS = 100;
/** Multipart bodies inside multipart bodies at most. */
export const MAX_DEPTH = 8;
/** Headers read per part at most. */
const MAX_HEADERS = 1000;

export interface MailhogPath {
  Relays: string[] | null;
  Mailbox: string;
  Domain: string;
  Params: string;
}

export interface MailhogContent {
  Headers: Record<string, string[]>;
  Body: string;
  Size: number;
  MIME: { Parts: MailhogContent[] } | null;
}

/** What the shape is made from: a stored mail, its envelope and its raw message as text. */
export interface MailhogSource {
  uuid: string;
  createdAt: number;
  /** MAIL FROM ('' for the null sender). */
  from: string;
  /** RCPT TO, each recipient. */
  to: string[];
  /** The client's HELO/EHLO name, '' when unknown. */
  helo: string;
  /** The raw message (UTF-8 when it is valid UTF-8, else one character per byte). */
  data: string;
}

/** A forward- or reverse-path split as MailHog splits it: source route, local part, domain. */
export function pathOf(path: string): MailhogPath {
  let email = path;
  let relays: string[] | null = null;
  const colon = path.indexOf(':');
  if (colon >= 0) {
    relays = path.slice(0, colon).split(',');
    email = path.slice(colon + 1);
  }
  const at = email.indexOf('@');
  return { Relays: relays, Mailbox: at >= 0 ? email.slice(0, at) : email, Domain: at >= 0 ? email.slice(at + 1) : '', Params: '' };
}

/** The boundary parameter of a multipart Content-Type, or '' (as Go's mime.ParseMediaType gives it). */
export function boundaryOf(contentType: string): string {
  const m = /;\s*boundary\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s;]+))/i.exec(contentType);
  if (!m) return '';
  return m[1] !== undefined ? m[1].replace(/\\(.)/g, '$1') : m[2]!;
}

/** Headers and body of one entity as MailHog splits them: at the first empty line, folded lines joined. */
export function contentOf(data: string, depth = 0): MailhogContent {
  const split = data.indexOf('\r\n\r\n');
  const headers: Record<string, string[]> = Object.create(null) as Record<string, string[]>;
  let body = data;
  if (split >= 0) {
    body = data.slice(split + 4);
    let last: string[] | undefined;
    let count = 0;
    for (const line of data.slice(0, split).split('\r\n')) {
      if (last && (line.startsWith(' ') || line.startsWith('\t'))) {
        last[last.length - 1] += line;
        continue;
      }
      const sep = line.indexOf(': ');
      if (sep <= 0 || count >= MAX_HEADERS) continue;
      const key = line.slice(0, sep);
      count++;
      last = Object.hasOwn(headers, key) ? headers[key]! : (headers[key] = []);
      last.push(line.slice(sep + 2));
    }
  }
  const content: MailhogContent = { Headers: { ...headers }, Body: body, Size: data.length, MIME: null };
  const type = headers['Content-Type']?.[0];
  if (type !== undefined && type.startsWith('multipart/') && depth < MAX_DEPTH) content.MIME = { Parts: partsOf(body, boundaryOf(type), depth + 1) };
  return content;
}

const isBreak = (c: number) => c === 13 || c === 10;

/** The text without the CR and LF characters at its two ends (Go's strings.Trim(s, "\r\n")), in one pass. */
function trimLineBreaks(s: string): string {
  let start = 0;
  let end = s.length;
  while (start < end && isBreak(s.charCodeAt(start))) start++;
  while (end > start && isBreak(s.charCodeAt(end - 1))) end--;
  return s.slice(start, end);
}

/** A multipart body's parts: the text between each "--boundary", the preamble and the epilogue left out. */
function partsOf(body: string, boundary: string, depth: number): MailhogContent[] {
  if (!boundary) return [];
  const pieces = body.split(`--${boundary}`).slice(1, -1);
  const parts: MailhogContent[] = [];
  for (const piece of pieces) {
    if (parts.length >= MAX_PARTS) break;
    if (piece.length === 0) continue;
    parts.push(contentOf(trimLineBreaks(piece), depth));
  }
  return parts;
}

/** One MailHog message. */
export function message(src: MailhogSource) {
  const content = contentOf(src.data);
  return {
    ID: src.uuid,
    From: pathOf(src.from),
    To: src.to.map(pathOf),
    Content: content,
    Created: new Date(src.createdAt).toISOString(),
    MIME: content.MIME,
    Raw: { From: src.from, To: src.to, Data: src.data, Helo: src.helo },
  };
}

/** The page envelope of GET /api/v2/messages and /api/v2/search, around the items' JSON as written. */
export const pageHead = (p: { total: number; count: number; start: number }): string => `{"total":${p.total},"count":${p.count},"start":${p.start},"items":[`;
export const PAGE_TAIL = ']}';
