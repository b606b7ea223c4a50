// Parsed views of stored mail (GET /api/mail/{uuid}/parsed, GET /mailtm/messages/{id};
// docs/decisions.md "Parsed mail"), between the routes and the parser's threads:
// - A view that could read only the header block (its parse ran out of budget, or was
//   refused) is kept with the mail (store.ts ParseOutcomeStore) and answered from there:
//   such a mail is parsed once, on whichever node, not once per request.
// - Requests for a mail whose parse is under way wait for that parse, not for one more.
// - Each client (an IPv4 address, an IPv6 /64) may have PARSE_VIEWS_PER_CLIENT views
//   waiting or parsing at once (more: 429), every client PARSE_VIEWS_WAITING in all
//   (more: 503); the clients that wait take turns for the threads (parse-lanes.ts), and a
//   waiting view holds no message: it is read once the parse has its thread.
import type { MailMetadata } from '@temp-inbox/api';
import { AppError, notFound } from '../../domain/errors.js';
import { createOpenCounter } from '../../limits/open-counter.js';
import type { MailRecord, MailSummary, ParseOutcomeStore } from '../../storage/store.js';
import type { MessageParser, MessageView } from './parse.js';

export interface ParsedMailView {
  mail: MailSummary;
  /** JSON bytes of the ParsedMailContent (mail/parse/parsed-view.ts), serialised in the parser's worker. */
  content: Buffer;
  degraded: boolean;
  /** JSON text of the mail's report summary, once one was kept (store.ts keepReportSummary). */
  reportSummary: string | undefined;
}

export interface ParsedViewLimits {
  /** Views one client may have waiting or parsing at once (PARSE_VIEWS_PER_CLIENT). */
  perClient: number;
  /** Views waiting or parsing at once in all (PARSE_VIEWS_WAITING). */
  total: number;
}

export interface ParsedViewsOptions {
  store: ParseOutcomeStore & { getMail(addressId: number, uuid: string): Promise<MailRecord | undefined> };
  parser: MessageParser;
  limits: ParsedViewLimits;
  /** A kept outcome that could not be stored (the view is answered all the same). */
  onKeepError?: (err: unknown) => void;
}

export interface ParsedViews {
  /** The parsed view of a live mail of the address; `client`: who asks, as the per-client limits count clients. */
  read(addressId: number, uuid: string, client: string): Promise<ParsedMailView>;
  /** Views waiting or parsing now (PARSE_VIEWS_WAITING counts them). */
  open(): number;
}

/** Seconds a client is asked to wait when no parser thread was free (a full budget's worth of queue). */
const PARSER_BUSY_RETRY_SECONDS = 5;
/** Seconds a client over its share of views is asked to wait: about one parse budget. */
const CLIENT_BUSY_RETRY_SECONDS = 5;

export function createParsedViews(opts: ParsedViewsOptions): ParsedViews {
  const { store, parser, limits } = opts;
  const perClient = createOpenCounter(limits.perClient);
  let open = 0;
  /** The parse under way for each mail (by id), which later requests for it wait for. */
  const underWay = new Map<number, Promise<MessageView | undefined>>();

  async function parseAndKeep(addressId: number, uuid: string, mailId: number, attachmentsListed: number, client: string): Promise<MessageView | undefined> {
    const load = async () => {
      const mail = await store.getMail(addressId, uuid);
      if (!mail) throw notFound('No such mail.');
      return mail.raw;
    };
    // Only the attachments the metadata lists can be downloaded, so only those are shown, with the same ids.
    const view = await parser.view(load, attachmentsListed, client);
    if (view?.degraded) await store.keepDegradedView(mailId, view.json).catch((err: unknown) => opts.onKeepError?.(err));
    return view;
  }

  async function parsed(addressId: number, uuid: string, mail: MailSummary, attachmentsListed: number, client: string): Promise<MessageView> {
    const release = perClient.admit(client);
    if (!release) throw new AppError('rate_limited', 'Too many parsed views of this client at once; retry in a moment.', CLIENT_BUSY_RETRY_SECONDS);
    try {
      if (open >= limits.total) throw new AppError('unavailable', 'Too many parsed views wait for the parser; retry in a moment.', PARSER_BUSY_RETRY_SECONDS);
      open++;
      try {
        let pending = underWay.get(mail.id);
        if (!pending) {
          pending = parseAndKeep(addressId, uuid, mail.id, attachmentsListed, client);
          underWay.set(mail.id, pending);
          const done = () => void underWay.delete(mail.id);
          pending.then(done, done);
        }
        const view = await pending;
        if (!view) throw new AppError('unavailable', 'Every parser thread is busy; retry in a moment.', PARSER_BUSY_RETRY_SECONDS);
        return view;
      } finally {
        open--;
      }
    } finally {
      release();
    }
  }

  return {
    async read(addressId, uuid, client) {
      const head = await store.getMailHead(addressId, uuid);
      if (!head) throw notFound('No such mail.');
      const metadata = JSON.parse(head.mail.metadata) as MailMetadata;
      const view = head.degradedView ? { json: head.degradedView, degraded: true } : await parsed(addressId, uuid, head.mail, metadata.attachments.length, client);
      // The authentication verdicts are those of the mail's arrival (they need its SMTP client), kept in its metadata.
      const content = metadata.auth ? Buffer.concat([view.json.subarray(0, -1), Buffer.from(`,"auth":${JSON.stringify(metadata.auth)}}`)]) : view.json;
      return { mail: head.mail, content, degraded: view.degraded, reportSummary: head.reportSummary };
    },
    open: () => open,
  };
}
