// Domains, accounts and tokens of the mail.tm-compatible API. An account is one of our
// addresses: POST /accounts creates it with the rules of POST /api/new_address and a
// password, POST /token answers its JWT, and any address's token (ours or this one) reads
// its account.
import type { FastifyPluginAsync } from 'fastify';
import { mounts, routes, within } from '@temp-inbox/api';
import { AppError, notFound } from '../../../domain/errors.js';
import { MailtmViolations } from '../../../mailtm/service.js';
import { account, accountIri, collection, domain, domainIri, resource, PAGE_SIZE } from '../../../mailtm/shapes.js';
import type { MailtmRouteOptions } from './options.js';
import { authenticate, formatOf, pageOf, sendJson } from './respond.js';

const hidden = { schema: { hide: true } } as const;

/** A JSON object body, else 400 as API Platform's decoder answers anything else. */
function objectBody(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new AppError('bad_request', 'Syntax error');
  return body as Record<string, unknown>;
}

export const accountRoutes: FastifyPluginAsync<MailtmRouteOptions> = async (fastify, { deps, mailtm }) => {
  const { mail, challenge } = deps;

  fastify.get(within(mounts.mailtm, routes.mailtmDomains), { ...hidden, config: { rateLimit: 'MAILTM' } }, async (request, reply) => {
    const format = formatOf(request);
    const { page, offset } = pageOf(request);
    const all = await mailtm.domains();
    const members = all.slice(offset, offset + PAGE_SIZE).map((d) => ({ iri: domainIri(d.id), body: domain(d) }));
    return sendJson(reply, 200, format, collection(format, 'Domain', '/domains', members, all.length, page));
  });

  fastify.get<{ Params: { id: string } }>(within(mounts.mailtm, routes.mailtmDomain), { ...hidden, config: { rateLimit: 'MAILTM' } }, async (request, reply) => {
    const format = formatOf(request);
    const d = await mailtm.domain(request.params.id);
    if (!d) throw notFound();
    return sendJson(reply, 200, format, resource(format, 'Domain', domainIri(d.id), domain(d)));
  });

  fastify.post(within(mounts.mailtm, routes.mailtmAccounts), { ...hidden, config: { rateLimit: 'MAILTM_ACCOUNTS' } }, async (request, reply) => {
    const format = formatOf(request);
    const body = objectBody(request.body);
    // The bot check of POST /api/new_address applies (docs/decisions.md "mail.tm accounts"):
    // with CHALLENGE set, the same token goes in `cf_token`; mail.tm's own clients send none.
    if (challenge.mode !== 'off') {
      const token = typeof body['cf_token'] === 'string' ? body['cf_token'] : undefined;
      try {
        await challenge.verify(token, request.ip);
      } catch (err) {
        if (err instanceof AppError && err.code === 'bad_request') throw new MailtmViolations([{ propertyPath: 'cf_token', message: err.message }]);
        throw err;
      }
    }
    const created = await mailtm.register(body, request.ip);
    return sendJson(reply, 201, format, resource(format, 'Account', accountIri(created.account.id), account(created.account)));
  });

  fastify.post(within(mounts.mailtm, routes.mailtmToken), { ...hidden, config: { rateLimit: 'MAILTM_TOKEN' } }, async (request, reply) => {
    const login = await mailtm.login(objectBody(request.body), request.ip);
    return sendJson(reply, 200, 'json', { token: login.token, '@id': accountIri(login.id), id: login.id });
  });

  fastify.get(within(mounts.mailtm, routes.mailtmMe), { ...hidden, config: { rateLimit: 'MAILTM' } }, async (request, reply) => {
    const format = formatOf(request);
    const address = await authenticate(request, mail);
    const fields = await mailtm.account(address);
    return sendJson(reply, 200, format, resource(format, 'Account', accountIri(fields.id), account(fields)));
  });

  // Another account's id, or one that names nothing, is the same 404 (ids are not looked up: ids.ts).
  fastify.get<{ Params: { id: string } }>(within(mounts.mailtm, routes.mailtmAccount), { ...hidden, config: { rateLimit: 'MAILTM' } }, async (request, reply) => {
    const format = formatOf(request);
    const address = await authenticate(request, mail);
    if (request.params.id !== mailtm.accountId(address)) throw notFound();
    const fields = await mailtm.account(address);
    return sendJson(reply, 200, format, resource(format, 'Account', accountIri(fields.id), account(fields)));
  });

  fastify.delete<{ Params: { id: string } }>(within(mounts.mailtm, routes.mailtmAccount), { ...hidden, config: { rateLimit: 'MAILTM' } }, async (request, reply) => {
    const address = await authenticate(request, mail);
    if (request.params.id !== mailtm.accountId(address)) throw notFound();
    await mail.deleteAddress(address.id);
    return reply.code(204).send();
  });
};
