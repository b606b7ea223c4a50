// A mail's HTML in a sandboxed frame (no scripts, no same-origin access). Images the
// mail carries itself (cid:) are shown from its own parts; anything remote is taken out
// of the markup (remote-content.ts), and blocked by the frame's own policy too, until
// the reader asks for images and styles, for this mail only, so a sender cannot tell
// the mail was opened.
import { useMemo, useState } from 'preact/hooks';
import type { Attachment } from 'postal-mime';
import { prepareHtml } from './remote-content.js';
import { s } from './strings.js';

/** Inline parts turned into data: URLs, up to this many bytes in all (the rest stay broken). */
const INLINE_BYTES = 8 * 1024 * 1024;

function base64(bytes: Uint8Array): string {
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

/** `cid:` references replaced by the inline parts they name. */
export function withInlineImages(html: string, attachments: Attachment[]): string {
  const byId = new Map<string, string>();
  let budget = INLINE_BYTES;
  for (const a of attachments) {
    const id = a.contentId?.replace(/^<|>$/g, '');
    if (!id || typeof a.content === 'string') continue;
    const bytes = new Uint8Array(a.content);
    if (bytes.length > budget) continue;
    budget -= bytes.length;
    byId.set(id.toLowerCase(), `data:${a.mimeType || 'application/octet-stream'};base64,${base64(bytes)}`);
  }
  if (byId.size === 0) return html;
  return html.replace(/cid:([^"'\s)>]+)/gi, (whole, id: string) => byId.get(decodeURIComponent(id).toLowerCase()) ?? whole);
}

/** The frame's document: its policy first (a second line of defence behind remote-content.ts), then the mail's. */
function htmlDocument(html: string, remote: boolean): string {
  const sources = remote ? 'data: https: http:' : 'data:';
  return (
    '<!doctype html><meta charset="utf-8">' +
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src ${sources}; style-src 'unsafe-inline'${remote ? ' https: http:' : ''}; font-src ${sources}; form-action 'none'">` +
    '<meta http-equiv="x-dns-prefetch-control" content="off">' +
    '<base target="_blank">' +
    html
  );
}

export function HtmlView(props: { html: string; attachments: Attachment[] }) {
  const { html, attachments } = props;
  const [remote, setRemote] = useState(false);
  const shown = useMemo(() => withInlineImages(html, attachments), [html, attachments]);
  // Nothing in the mail reaches the network until Load, and then only images and styles (remote-content.ts).
  const local = useMemo(() => prepareHtml(shown, false), [shown]);
  const loaded = useMemo(() => (remote ? prepareHtml(shown, true) : undefined), [shown, remote]);
  const blocked = local.blocked;
  return (
    <>
      {blocked && !remote && (
        <p class="remote-bar" role="status">
          {s.remoteBlocked}{' '}
          <button type="button" onClick={() => setRemote(true)}>
            {s.loadRemote}
          </button>
        </p>
      )}
      {/* Links open in a new tab (rel noopener noreferrer via the frame's sandbox and <base target>). */}
      <iframe
        key={remote ? 'remote' : 'local'}
        title={s.htmlFrame}
        class="html"
        sandbox="allow-popups allow-popups-to-escape-sandbox"
        referrerpolicy="no-referrer"
        srcDoc={htmlDocument((loaded ?? local).html, remote)}
      />
    </>
  );
}
