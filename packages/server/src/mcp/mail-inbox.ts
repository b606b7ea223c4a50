// The inbox of an MCP caller (its token's address, or its sandbox's) as the shared tool
// code (@temp-inbox/api/mcp) uses it, on the mail service and the event bus: waits hear of
// mail committed on any node as GET /api/mails/wait does, and reads are the parsed view
// GET /api/mail/{uuid}/parsed answers.
import { McpToolError, type McpInbox, type McpListedMail, type McpMail, type McpWaitRequest } from '@temp-inbox/api/mcp';
import type { MailMetadata } from '@temp-inbox/api';
import type { EventBus } from '../mail/events/events.js';
import { mailFilter, type MailFilter } from '../mail/events/filter.js';
import type { MailService } from '../mail/service.js';
import type { MailSummary } from '../storage/store.js';

/** Mails looked at per page of a wait's look-up (the newest first, as GET /api/mails/wait). */
const PAGE = 100;

export interface McpPrincipal {
  addressId: number;
  address: string;
  /** Set for a sandbox's login or token: its name. */
  sandbox?: string;
}

export interface McpInboxDeps {
  mail: MailService;
  bus: EventBus;
  /** Who asks (clientKey of the request's IP), for the parser's per-client share. */
  client: string;
  /** Counts one more open wait (EVENTS_PER_*; throws the 429 or 503 past a cap); returns its release. */
  admit: () => () => void;
  /** Registers how to end a wait when the server closes; returns the unregister. */
  onClose: (end: () => void) => () => void;
  /** Waits consider mail above this id unless told otherwise (the newest when the session began). */
  baseline: number;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** The caller's live mails with an id above `since` that `match` accepts, oldest first. */
async function newer(mail: MailService, addressId: number, since: number, match: MailFilter | undefined): Promise<MailSummary[]> {
  const found: MailSummary[] = [];
  for (let offset = 0; ; offset += PAGE) {
    const page = await mail.listMails(addressId, PAGE, offset);
    found.push(...page.results.filter((m) => m.id > since && (!match || match(m))));
    if (page.results.length < PAGE || page.results.some((m) => m.id <= since)) return found.sort((a, b) => a.id - b.id);
  }
}

type Arrival = 'mail' | 'gone' | 'closed' | 'timeout' | 'aborted';

/** Resolves when a mail above `since` that `match` accepts is committed, the address is deleted, the server closes, the deadline passes or the signal aborts. */
function arrival(deps: McpInboxDeps, addressId: number, since: number, match: MailFilter | undefined, deadline: number, signal: AbortSignal): { next: Promise<Arrival>; cancel: () => void } {
  let finish: (why: Arrival) => void = () => undefined;
  const next = new Promise<Arrival>((resolve) => {
    let settled = false;
    finish = (why) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      unsubscribe();
      unregister();
      signal.removeEventListener('abort', onAbort);
      resolve(why);
    };
    const onAbort = () => finish('aborted');
    const unsubscribe = deps.bus.subscribe(addressId, (event) => {
      if (event.type === 'mail' && event.mail.id > since && (!match || match(event.mail))) finish('mail');
      else if (event.type === 'address_deleted') finish('gone');
    });
    const unregister = deps.onClose(() => finish('closed'));
    const timer = setTimeout(() => finish('timeout'), Math.max(0, deadline - Date.now()));
    signal.addEventListener('abort', onAbort, { once: true });
    if (signal.aborted) finish('aborted');
  });
  return { next, cancel: () => finish('aborted') };
}

function mcpMail(summary: MailSummary, content: Buffer): McpMail {
  return {
    ...(JSON.parse(content.toString('utf8')) as Omit<McpMail, 'id' | 'uuid' | 'created_at'>),
    id: summary.id,
    uuid: summary.uuid,
    created_at: iso(summary.createdAt),
    ...(summary.envelope ? { recipients: summary.envelope.to } : {}),
  };
}

function listed(m: MailSummary): McpListedMail {
  return { id: m.id, uuid: m.uuid, created_at: iso(m.createdAt), seen: m.seen, metadata: JSON.parse(m.metadata) as MailMetadata };
}

export function mcpMailInbox(principal: McpPrincipal, deps: McpInboxDeps): McpInbox {
  const { mail } = deps;
  const { addressId } = principal;
  const read = async (uuid: string) => {
    const view = await mail.readParsed(addressId, uuid, deps.client);
    return mcpMail(view.mail, view.content);
  };
  return {
    address: principal.address,
    sandbox: principal.sandbox !== undefined,
    async wait(request: McpWaitRequest) {
      const deadline = Date.now() + request.timeoutMs;
      const match = mailFilter(request);
      const release = deps.admit();
      try {
        let cursor = request.since ?? deps.baseline;
        for (;;) {
          // Listening before the look, so that a mail committed in between is not missed.
          const coming = arrival(deps, addressId, cursor, match, deadline, request.signal);
          for (const summary of await newer(mail, addressId, cursor, match)) {
            cursor = Math.max(cursor, summary.id);
            let found: McpMail;
            try {
              found = await read(summary.uuid);
            } catch (err) {
              if ((err as { code?: string }).code === 'not_found') continue; // deleted meanwhile
              coming.cancel();
              throw err;
            }
            if (request.accept(found)) {
              coming.cancel();
              return found;
            }
          }
          const why = await coming.next;
          if (why === 'aborted' || request.signal.aborted) throw request.signal.reason;
          if (why === 'timeout') return undefined;
          if (why === 'gone') throw new McpToolError(`The inbox ${principal.address} was deleted.`);
          if (why === 'closed') throw new McpToolError('The server is shutting down; call again in a moment.');
        }
      } finally {
        release();
      }
    },
    async list(limit, offset) {
      const page = await mail.listMails(addressId, limit, offset);
      return { mails: page.results.map(listed), count: page.count };
    },
    read,
    deleteMail: (uuid) => mail.deleteMail(addressId, uuid),
    async delete() {
      await mail.deleteAddress(addressId);
    },
  };
}
