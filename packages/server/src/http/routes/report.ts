// GET /api/mail/{uuid}/report: the deliverability report of one mail (report/service.ts;
// docs/api.md "Deliverability report"). A sandbox's token reads its sandbox's mail here
// as on every /api route of an address. Counted with the parsed view's rate limit
// (RATE_LIMIT_PARSED_MAIL): a report parses the mail too.
import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { MailReport, ReportQuery, routes, UuidParams } from '@temp-inbox/api';
import type { ReportService } from '../../report/service.js';
import type { HttpDeps } from '../deps.js';
import { authenticate } from '../auth.js';
import { clientKey } from '../rate-limit.js';
import { errorResponse } from '../errors.js';

export const reportRoutes: FastifyPluginAsync<{ deps: HttpDeps; report: ReportService }> = async (fastify, { deps, report }) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    routes.mailReport,
    {
      config: { rateLimit: 'PARSED_MAIL' },
      schema: {
        summary: 'The deliverability report of one mail: spam score, HTML support, links, content, sender rules',
        description: [
          'Sections, each with a verdict (pass, warn, fail, unavailable with a reason) and its findings. Built when asked, off the event loop;',
          'the spam score needs SPAM_SCANNER. `?links=check` also fetches each link (HEAD, GET where HEAD is refused) through the address guard;',
          'links that act when opened (unsubscribe, confirm) are never fetched.',
        ].join(' '),
        tags: ['mail'],
        security: [{ bearer: [] }],
        params: UuidParams,
        querystring: ReportQuery,
        response: {
          200: MailReport,
          401: errorResponse('JWT missing, malformed, expired, or its address was deleted.'),
          404: errorResponse('Unknown, foreign, deleted or malformed uuid.'),
          429: errorResponse('Rate limit exceeded, or too many parsed views of this client at once; see Retry-After.'),
          503: errorResponse('Every parser thread or report worker stayed busy; see Retry-After.'),
        },
      },
    },
    async (request) => {
      const address = await authenticate(request, deps.mail);
      return report.report(address.id, request.params.uuid, clientKey(request.ip), { checkLinks: request.query.links === 'check' });
    },
  );
};
