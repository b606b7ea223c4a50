// A mail's HTML in a sandboxed frame (no scripts, no same-origin access). Images the
// mail carries itself (cid:) are shown from its own parts (inline-images.ts); anything
// remote is taken out of the markup (remote-content.ts), and blocked by the frame's own
// policy too, until the reader asks for images and styles, for this mail only, so a
// sender cannot tell the mail was opened.
import { useEffect, useMemo, useState } from 'preact/hooks';
import type { ParsedAttachment } from './api.js';
import { withInlineImages } from './inline-images.js';
import { prepareHtml } from './remote-content.js';
import { s } from './strings.js';

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

export function HtmlView(props: { uuid: string; html: string; attachments: ParsedAttachment[] }) {
  const { uuid, html, attachments } = props;
  const [remote, setRemote] = useState(false);
  // The HTML with its inline images, once they are fetched (the frame is drawn once, with them).
  const [shown, setShown] = useState<string | undefined>();
  useEffect(() => {
    let current = true;
    setShown(undefined);
    void withInlineImages(uuid, html, attachments).then((h) => current && setShown(h));
    return () => {
      current = false;
    };
  }, [uuid, html, attachments]);
  // Nothing in the mail reaches the network until Load, and then only images and styles (remote-content.ts).
  const local = useMemo(() => (shown === undefined ? undefined : prepareHtml(shown, false)), [shown]);
  const loaded = useMemo(() => (remote && shown !== undefined ? prepareHtml(shown, true) : undefined), [shown, remote]);
  if (!local) return <p class="muted">{s.loading}</p>;
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
