// The changes to an address's mail: PATCH /api/mail/{uuid} (read or unread), DELETE
// /api/mails/{uuid} (one mail) and DELETE /api/clear_inbox (all of it) (registered by mails.ts).
import { MailListItem, routes, SeenBody, SuccessResponse, UuidParams } from '@temp-inbox/api';
import type { HttpDeps } from '../deps.js';
import { authenticate } from '../auth.js';
import { errorResponse } from '../errors.js';
import { toItem } from '../presenters.js';
import { bearer, notFoundResponse, rateLimited, unauthorizedResponse } from './mail-options.js';
import type { RouteApp } from './route-app.js';

export function mailChangeRoutes(app: RouteApp, { deps }: { deps: HttpDeps }): void {
  const { mail } = deps;

  app.patch(
    routes.mail,
    {
      // The bucket of GET /api/mail/{uuid}: a client that reads a mail then marks it read spends two of the same.
      config: { rateLimit: 'MAIL' },
      schema: {
        summary: 'Mark one mail read or unread',
        description:
          'Sets the mail\'s `seen` flag and answers the mail as GET /api/mails lists it. Reading a mail (GET /api/mail/{uuid}, /parsed) never sets it; the web UI sets it when a mail is opened.',
        tags: ['mail'],
        security: bearer,
        params: UuidParams,
        body: SeenBody,
        response: {
          200: MailListItem,
          400: errorResponse('The body is not JSON of the form {"seen": true|false}.'),
          401: unauthorizedResponse,
          404: notFoundResponse,
          429: rateLimited,
        },
      },
    },
    async (request) => {
      const address = await authenticate(request, mail);
      return toItem(await mail.setSeen(address.id, request.params.uuid, request.body.seen));
    },
  );

  app.delete(
    routes.deleteMail,
    {
      schema: {
        summary: 'Soft-delete one mail',
        tags: ['mail'],
        security: bearer,
        params: UuidParams,
        response: { 200: SuccessResponse, 401: unauthorizedResponse, 404: notFoundResponse },
      },
    },
    async (request) => {
      const address = await authenticate(request, mail);
      await mail.deleteMail(address.id, request.params.uuid);
      return { success: true };
    },
  );

  app.delete(
    routes.clearInbox,
    {
      config: { rateLimit: 'CLEAR_INBOX' },
      schema: {
        summary: 'Delete all mail of the address',
        tags: ['mail'],
        security: bearer,
        response: { 200: SuccessResponse, 401: unauthorizedResponse, 429: rateLimited },
      },
    },
    async (request) => {
      const address = await authenticate(request, mail);
      await mail.clearInbox(address.id);
      return { success: true };
    },
  );
}
