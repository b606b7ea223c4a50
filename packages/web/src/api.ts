// The browser's side of the temp-inbox API. The page authenticates with the cookies
// the server sets (`jwt` for the active address, `session_id` for the session), so
// no token is ever handled by script.
import { s } from './strings.js';
import type {
  FullMail,
  MailListItem,
  MailMetadata,
  MailReport,
  MailsResponse,
  NewAddressResponse,
  ParsedAttachment,
  ParsedMail,
  PowChallenge,
  SessionListing,
  Webhook,
  WebhookCreated,
  WebhookDeliveriesResponse,
  WebhookDelivery,
} from '@temp-inbox/api';
import { path, routes } from '@temp-inbox/api/routes';

export type { FullMail, MailListItem, MailMetadata, MailReport, ParsedAttachment, ParsedMail, SessionListing, Webhook, WebhookCreated, WebhookDelivery };

/** An error answer of the API: its status and its plain-text sentence. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(path, {
    method,
    credentials: 'same-origin',
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) {
    const text = (await res.text()).trim();
    const wait = res.headers.get('retry-after');
    throw new ApiError(res.status, `${text || res.statusText}${res.status === 429 && wait && Number(wait) > 0 ? s.tryAgainIn(Number(wait)) : ''}`);
  }
  return (await res.json()) as T;
}

export interface UiConfig {
  domains: string[];
  turnstileSiteKey: string | null;
  customNames: boolean;
  /** The bot challenge creating an address asks for (Turnstile shows when turnstileSiteKey is set). */
  challenge: 'turnstile' | 'pow' | 'off';
  /** Where abuse is reported (ABUSE_CONTACT): an email address or an http(s) URL; null when unset. */
  abuseContact: string | null;
}

export const api = {
  config: () => call<UiConfig>('GET', path(routes.uiConfig)),
  session: () => call<SessionListing>('GET', path(routes.sessionAddresses)),
  challenge: () => call<PowChallenge>('GET', path(routes.challenge)),
  newAddress: (req: { name?: string; domain?: string; cf_token?: string }) => call<NewAddressResponse>('POST', path(routes.newAddress), req),
  switchAddress: (address: string) => call<{ success: boolean; address: string }>('POST', path(routes.switchAddress), { address }),
  openAddress: (jwt: string) => call<{ success: boolean; address: string }>('POST', path(routes.openAddress), { jwt }),
  /** A sandbox's inbox by its SMTP login: sets the jwt cookie and adds it to the session, as a new address does. */
  openSandbox: (name: string, password: string) => call<{ name: string; address: string; jwt: string }>('POST', path(routes.sandboxToken), { name, password }),
  logout: () => call<{ success: boolean }>('POST', path(routes.logout), {}),
  deleteAddress: () => call<{ success: boolean }>('DELETE', path(routes.deleteAddress)),
  mails: (limit: number, offset: number) => call<MailsResponse>('GET', `${path(routes.mails)}?limit=${limit}&offset=${offset}`),
  search: (q: string, limit: number, offset: number) => call<MailsResponse>('GET', `${path(routes.searchMails)}?q=${encodeURIComponent(q)}&limit=${limit}&offset=${offset}`),
  mail: (uuid: string) => call<FullMail>('GET', path(routes.mail, { uuid })),
  /** The mail parsed by the server (docs/api.md "GET /api/mail/{uuid}/parsed"): the page parses no MIME itself. */
  parsed: (uuid: string) => call<ParsedMail>('GET', path(routes.parsedMail, { uuid })),
  /** Marks a mail read (true) or unread (false); answers its list item. */
  /** The deliverability report (docs/api.md "Deliverability report"); `checkLinks` fetches each link too. */
  report: (uuid: string, checkLinks = false) => call<MailReport>('GET', `${path(routes.mailReport, { uuid })}${checkLinks ? '?links=check' : ''}`),
  markSeen: (uuid: string, seen: boolean) => call<MailListItem>('PATCH', path(routes.mail, { uuid }), { seen }),
  deleteMail: (uuid: string) => call<{ success: boolean }>('DELETE', path(routes.deleteMail, { uuid })),
  clearInbox: () => call<{ success: boolean }>('DELETE', path(routes.clearInbox)),
  attachmentUrl: (uuid: string, id: string) => path(routes.attachment, { uuid, attachmentId: id }),
  /** The active address's webhook, or null when it has none. */
  webhook: () =>
    call<Webhook>('GET', path(routes.webhook)).catch((err: unknown) => {
      if (err instanceof ApiError && err.status === 404) return null;
      throw err;
    }),
  /** Sets or replaces the webhook; the answer holds its new secret, shown nowhere else. */
  setWebhook: (url: string) => call<WebhookCreated>('PUT', path(routes.webhook), { url }),
  removeWebhook: () => call<{ success: boolean }>('DELETE', path(routes.webhook)),
  webhookDeliveries: (limit: number) => call<WebhookDeliveriesResponse>('GET', `${path(routes.webhookDeliveries)}?limit=${limit}`),
};

/** The metadata JSON of a mail; an empty shape when it cannot be read. */
export function metadataOf(item: MailListItem): MailMetadata {
  try {
    return JSON.parse(item.metadata) as MailMetadata;
  } catch {
    const empty: MailMetadata = { subject: '', from: { name: '', address: '' }, to: [], date: null, size: 0, preview: '', has_html: false, attachments: [], codes: [], links: [] };
    return empty;
  }
}
