// The browser's side of the temp-inbox API. The page authenticates with the cookies
// the server sets (`jwt` for the active address, `session_id` for the session), so
// no token is ever handled by script.
import { s } from './strings.js';
import type {
  FullMail,
  MailListItem,
  MailMetadata,
  MailsResponse,
  NewAddressResponse,
  PowChallenge,
  SessionListing,
  Webhook,
  WebhookCreated,
  WebhookDeliveriesResponse,
  WebhookDelivery,
} from '@temp-inbox/api';

export type { FullMail, MailListItem, MailMetadata, SessionListing, Webhook, WebhookCreated, WebhookDelivery };

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
}

export const api = {
  config: () => call<UiConfig>('GET', '/ui-config.json'),
  session: () => call<SessionListing>('GET', '/api/session/addresses'),
  challenge: () => call<PowChallenge>('GET', '/api/challenge'),
  newAddress: (req: { name?: string; domain?: string; cf_token?: string }) => call<NewAddressResponse>('POST', '/api/new_address', req),
  switchAddress: (address: string) => call<{ success: boolean; address: string }>('POST', '/api/switch_address', { address }),
  openAddress: (jwt: string) => call<{ success: boolean; address: string }>('POST', '/api/open_address', { jwt }),
  /** A sandbox's inbox by its SMTP login: sets the jwt cookie and adds it to the session, as a new address does. */
  openSandbox: (name: string, password: string) => call<{ name: string; address: string; jwt: string }>('POST', '/api/sandbox/token', { name, password }),
  logout: () => call<{ success: boolean }>('POST', '/api/logout', {}),
  deleteAddress: () => call<{ success: boolean }>('DELETE', '/api/delete_address'),
  mails: (limit: number, offset: number) => call<MailsResponse>('GET', `/api/mails?limit=${limit}&offset=${offset}`),
  search: (q: string, limit: number, offset: number) => call<MailsResponse>('GET', `/api/mails/search?q=${encodeURIComponent(q)}&limit=${limit}&offset=${offset}`),
  mail: (uuid: string) => call<FullMail>('GET', `/api/mail/${encodeURIComponent(uuid)}`),
  /** Marks a mail read (true) or unread (false); answers its list item. */
  markSeen: (uuid: string, seen: boolean) => call<MailListItem>('PATCH', `/api/mail/${encodeURIComponent(uuid)}`, { seen }),
  deleteMail: (uuid: string) => call<{ success: boolean }>('DELETE', `/api/mails/${encodeURIComponent(uuid)}`),
  clearInbox: () => call<{ success: boolean }>('DELETE', '/api/clear_inbox'),
  attachmentUrl: (uuid: string, id: string) => `/api/attachment/${encodeURIComponent(uuid)}/${encodeURIComponent(id)}`,
  /** The active address's webhook, or null when it has none. */
  webhook: () =>
    call<Webhook>('GET', '/api/webhook').catch((err: unknown) => {
      if (err instanceof ApiError && err.status === 404) return null;
      throw err;
    }),
  /** Sets or replaces the webhook; the answer holds its new secret, shown nowhere else. */
  setWebhook: (url: string) => call<WebhookCreated>('PUT', '/api/webhook', { url }),
  removeWebhook: () => call<{ success: boolean }>('DELETE', '/api/webhook'),
  webhookDeliveries: (limit: number) => call<WebhookDeliveriesResponse>('GET', `/api/webhook/deliveries?limit=${limit}`),
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
