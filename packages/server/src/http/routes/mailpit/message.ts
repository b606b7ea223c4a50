// One message of the Mailpit-compatible API: GET /api/v1/message/{ID} (its summary, which
// marks it read, as Mailpit's does), /headers, /raw, /part/{PartID}, and the rendered
// /view/{ID}.html and .txt. {ID} is the mail's uuid or "latest". Text, HTML and headers come
// from the mail's parsed view (the parser's worker threads, within their budget), never from
// a parse on the event loop. Mailpit's checks (HTML, links, SpamAssassin) are sections of the
// mail's deliverability report; thumbnails and release answer that they are not available:
// nothing leaves a sandbox.
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { MailpitHeaders, MailpitMessage, mounts, path, routes, within } from '@temp-inbox/api';
import { AppError, notFound } from '../../../domain/errors.js';
import { checksumsOf, type Checksums } from '../../../mailpit/checksums.js';
import { viewAnswer, type ViewKind } from '../../../mailpit/message-view.js';
import { mailpitHtmlCheck, mailpitLinkCheck, mailpitSpamCheck } from '../../../mailpit/report-shapes.js';
import type { ParsedMailView } from '../../../mail/service.js';
import type { Sandbox } from '../../../sandboxes/types.js';
import { rawBody } from '../../mail-answers.js';
import { mailpitMail, sendAttachment } from '../../presenters.js';
import { clientKey } from '../../rate-limit.js';
import type { MailpitRouteOptions } from './options.js';
import { answering, resolveId, routeOptions, sandboxOf, sendJson } from './respond.js';

type IdParams = { Params: { id: string } };

/** A refusal of something this server does not do, in Mailpit's manner (400, plain text). */
const notAvailable = (what: string) => new AppError('bad_request', `${what} is not available on this server.`);

/** The parsed view's HTML is shown sandboxed: no script, no request anywhere but inline images of the message itself. */
const VIEW_CSP = "sandbox; default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'";

export const messageRoutes: FastifyPluginAsync<MailpitRouteOptions> = async (fastify, { deps, hook, answers }) => {
  const { mail, store } = deps;
  const opts = routeOptions('MAILPIT', hook);
  // A summary, its headers and the views parse the message again (as GET /api/mail/{uuid}/parsed): that budget.
  const parsedOpts = routeOptions('PARSED_MAIL', hook);

  async function parsedOf(request: FastifyRequest, id: string): Promise<{ sandbox: Sandbox; parsed: ParsedMailView }> {
    const sandbox = sandboxOf(request);
    const uuid = await resolveId(mail, sandbox, id);
    return { sandbox, parsed: await mail.readParsed(sandbox.addressId, uuid, clientKey(request.ip)) };
  }

  async function answer(kind: ViewKind, sandbox: Sandbox, parsed: ParsedMailView, partBase?: string): Promise<Buffer> {
    const tags = (await store.mailTags(sandbox.addressId, [parsed.mail.id])).get(parsed.mail.id) ?? [];
    const mailpit = mailpitMail(parsed.mail, sandbox, tags);
    if (kind === 'summary') mailpit.checksums = await checksumsFor(sandbox, parsed.mail.uuid, mailpit.metadata.attachments.length);
    return viewAnswer({ kind, mail: mailpit, ...(partBase === undefined ? {} : { partBase }) }, parsed.content);
  }

  /** The checksums of the mail's attachments (the ids its metadata lists), from the bytes kept at delivery. */
  async function checksumsFor(sandbox: Sandbox, uuid: string, count: number): Promise<Record<string, Checksums>> {
    const ids: string[] = [];
    const parts: Buffer[] = [];
    for (let i = 0; i < count; i++) {
      // One that cannot be read (the mail deleted meanwhile) is listed without checksums.
      const part = await mail.getAttachment(sandbox.addressId, uuid, String(i)).catch((err: unknown) => {
        if (err instanceof AppError && err.code === 'not_found') return undefined;
        throw err;
      });
      if (!part) continue;
      ids.push(String(i));
      parts.push(part.content);
    }
    const sums = await checksumsOf(parts);
    return Object.fromEntries(sums.map((s, i) => [ids[i]!, s]));
  }

  fastify.get<IdParams>(within(mounts.mailpit, routes.mailpitMessage), answering(parsedOpts, MailpitMessage), async (request, reply) => {
    const { sandbox, parsed } = await parsedOf(request, request.params.id);
    // Mailpit marks a message read when its summary is read.
    if (!parsed.mail.seen) {
      await mail.setSeen(sandbox.addressId, parsed.mail.uuid, true);
      parsed.mail = { ...parsed.mail, seen: true };
    }
    return sendJson(reply, await answer('summary', sandbox, parsed));
  });

  fastify.get<IdParams>(within(mounts.mailpit, routes.mailpitMessageHeaders), answering(parsedOpts, MailpitHeaders), async (request, reply) => {
    const { sandbox, parsed } = await parsedOf(request, request.params.id);
    return sendJson(reply, await answer('headers', sandbox, parsed));
  });

  fastify.get<IdParams>(within(mounts.mailpit, routes.mailpitMessageRaw), opts, async (request, reply) => {
    const sandbox = sandboxOf(request);
    const m = await mail.openMail(sandbox.addressId, await resolveId(mail, sandbox, request.params.id));
    const body = await rawBody(request, reply, answers, m);
    return reply.type('text/plain; charset=utf-8').header('cache-control', 'private, no-store').send(body);
  });

  fastify.get<{ Params: { id: string; part: string } }>(within(mounts.mailpit, routes.mailpitMessagePart), opts, async (request, reply) => {
    const sandbox = sandboxOf(request);
    const uuid = await resolveId(mail, sandbox, request.params.id);
    return sendAttachment(request, reply, answers, await mail.getAttachment(sandbox.addressId, uuid, request.params.part));
  });

  fastify.get<{ Params: { id: string; part: string } }>(within(mounts.mailpit, routes.mailpitMessagePartThumb), opts, async () => {
    throw notAvailable('A thumbnail of an attachment');
  });
  // Mailpit's checks: sections of the mail's deliverability report (report/service.ts), which parses it too.
  async function reportOf(request: FastifyRequest<IdParams>, checkLinks: boolean) {
    const sandbox = sandboxOf(request);
    const uuid = await resolveId(mail, sandbox, request.params.id);
    return deps.report.report(sandbox.addressId, uuid, clientKey(request.ip), { checkLinks });
  }
  fastify.get<IdParams>(within(mounts.mailpit, routes.mailpitMessageHtmlCheck), parsedOpts, async (request, reply) => {
    const report = await reportOf(request, false);
    if (report.html.support === null && report.html.verdict === 'pass') throw new AppError('bad_request', 'This message has no HTML part.');
    if (report.html.verdict === 'unavailable') throw new AppError('bad_request', report.html.reason ?? 'The HTML check is not available for this message.');
    return sendJson(reply, await mailpitHtmlCheck(report.html));
  });
  fastify.get<IdParams>(within(mounts.mailpit, routes.mailpitMessageLinkCheck), parsedOpts, async (request, reply) => {
    return sendJson(reply, mailpitLinkCheck((await reportOf(request, true)).links));
  });
  fastify.get<IdParams>(within(mounts.mailpit, routes.mailpitMessageSpamCheck), parsedOpts, async (request, reply) => {
    return sendJson(reply, mailpitSpamCheck((await reportOf(request, false)).spam));
  });
  fastify.post<IdParams>(within(mounts.mailpit, routes.mailpitMessageRelease), opts, async () => {
    throw new AppError('forbidden', 'Releasing is not available: a sandbox keeps its mail and never relays it.');
  });

  // /view/{ID}.html and /view/{ID}.txt: the message's HTML (its inline images pointed at their
  // parts) or text, as a page of its own.
  fastify.get<{ Params: { file: string } }>(within(mounts.mailpit, routes.mailpitView), parsedOpts, async (request, reply) => {
    const m = /^(.+)\.(html|txt)$/.exec(request.params.file);
    if (!m) throw notFound('No such view; use /view/{ID}.html or /view/{ID}.txt.');
    const [, id, ext] = m as unknown as [string, string, 'html' | 'txt'];
    const { sandbox, parsed } = await parsedOf(request, id);
    return ext === 'html' ? sendHtml(reply, await htmlAnswer(sandbox, parsed)) : sendText(reply, await answer('text', sandbox, parsed));
  });

  // cypress-mailpit asks for <base>//view/{ID}.html; Mailpit's router answers a path with a
  // doubled slash with a redirect to the clean one, which its request follows. So do we (the
  // view's relative links hold only at the clean path).
  fastify.get<{ Params: { file: string } }>(within(mounts.mailpit, routes.mailpitViewDoubleSlash), opts, async (request, reply) =>
    reply.redirect(`${request.url.slice(0, request.url.indexOf('//view/'))}${path(within(mounts.mailpit, routes.mailpitView), { file: request.params.file })}`, 301),
  );

  async function htmlAnswer(sandbox: Sandbox, parsed: ParsedMailView): Promise<Buffer> {
    // The view is at /mailpit/view/{ID}.html: each inline part's download, relative to it.
    const view = await answer('html', sandbox, parsed, `..${path(within(mounts.mailpit, routes.mailpitMessagePart), { id: parsed.mail.uuid, part: '' })}`);
    if (view[0] !== 0x31) throw notFound('This message has no HTML part.');
    return view;
  }
};

function sendHtml(reply: FastifyReply, answer: Buffer): FastifyReply {
  return reply
    .type('text/html; charset=utf-8')
    .header('content-security-policy', VIEW_CSP)
    .header('cache-control', 'private, no-store')
    .send(answer.subarray(1));
}

function sendText(reply: FastifyReply, answer: Buffer): FastifyReply {
  return reply.type('text/plain; charset=utf-8').header('cache-control', 'private, no-store').send(answer.subarray(1));
}
