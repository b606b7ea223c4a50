// The form of SPAM_SCANNER (docs/deploy.md "13. Configuration"): which scanner the
// deliverability report asks, and where. In the domain because config checks it and the
// report uses it.

export interface ScannerTarget {
  kind: 'rspamd' | 'spamd';
  host: string;
  port: number;
}

const FORM = 'SPAM_SCANNER must be rspamd://host:port or spamd://host:port.';

/** `rspamd://host:11333` or `spamd://host:783` (default ports when omitted); throws a sentence for anything else. */
export function parseScanner(raw: string): ScannerTarget {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(FORM);
  }
  const kind = url.protocol === 'rspamd:' ? 'rspamd' : url.protocol === 'spamd:' ? 'spamd' : null;
  if (!kind || url.hostname === '' || url.pathname.replace(/^\/+/, '') !== '' || url.search !== '' || url.username !== '') throw new Error(FORM);
  const port = url.port === '' ? (kind === 'rspamd' ? 11333 : 783) : Number(url.port);
  return { kind, host: url.hostname.replace(/^\[|\]$/g, ''), port };
}
