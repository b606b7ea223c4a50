// /api/admin/addresses and an address's mail: list, create and delete addresses, list and
// read the live mail of one (registered by admin.ts behind the admin token's check).
import {
  AdminAddressesQuery,
  AdminAddressesResponse,
  AdminIdParams,
  AdminMailParams,
  AdminNewAddressBody,
  FullMail,
  MailsQuery,
  MailsResponse,
  MAX_ADMIN_QUERY_CHARS,
  NewAddressResponse,
  routes,
  SuccessResponse,
} from '@temp-inbox/api';
import { errorResponse } from '../errors.js';
import { boundedStrings, strictIntegers } from '../query.js';
import { rawToString, toItem } from '../presenters.js';
import { type AdminRouteOptions, badInput, hide, idOf, iso, rateLimited, tags, unauthorizedResponse, uuidOf } from './admin-options.js';
import type { RouteApp } from './route-app.js';

export function adminAddressRoutes(app: RouteApp, { admin, route, act }: AdminRouteOptions): void {
  app.get(
    routes.adminAddresses,
    {
      ...route,
      preValidation: [strictIntegers('limit', 'offset'), boundedStrings(MAX_ADMIN_QUERY_CHARS, 'q')],
      schema: {
        hide,
        tags,
        summary: 'Addresses with their mail count and last activity, newest first',
        querystring: AdminAddressesQuery,
        response: {
          200: AdminAddressesResponse,
          400: badInput(`limit (1..100) and offset (>= 0) are required integers; q is at most ${MAX_ADMIN_QUERY_CHARS} characters.`),
          401: unauthorizedResponse,
          429: rateLimited,
        },
      },
    },
    async (request) => {
      const { q = '', limit, offset } = request.query;
      act(request, 'addresses.list', { q, limit, offset });
      const page = await admin.listAddresses(q, limit, offset);
      return {
        results: page.results.map((a) => ({
          id: a.id,
          address: a.address,
          created_at: iso(a.createdAt),
          unclaimed: a.unclaimed,
          mails: a.mails,
          bytes: a.bytes,
          last_activity: iso(a.lastMailAt ?? a.createdAt),
        })),
        count: page.count,
      };
    },
  );

  app.post(
    routes.adminAddresses,
    {
      ...route,
      schema: {
        hide,
        tags,
        summary: 'Create an address and get its token',
        body: AdminNewAddressBody,
        response: {
          200: NewAddressResponse,
          400: badInput('Invalid or reserved name, or unknown domain.'),
          401: unauthorizedResponse,
          403: errorResponse('Custom names are disabled on this server.'),
          409: errorResponse('The name is taken by a live address.'),
          429: rateLimited,
        },
      },
    },
    async (request) => {
      // The token is the answer; it is never logged.
      const entry = act(request, 'address.create', { name: request.body.name, domain: request.body.domain });
      const created = await admin.createAddress(request.body);
      Object.assign(entry, { addressId: created.address.id, address: created.address.address });
      return { address: created.address.address, jwt: created.jwt };
    },
  );

  app.delete(
    routes.adminAddress,
    {
      ...route,
      schema: {
        hide,
        tags,
        summary: 'Delete an address with all its mail',
        params: AdminIdParams,
        response: { 200: SuccessResponse, 400: badInput('Malformed id.'), 401: unauthorizedResponse, 404: errorResponse('No such address.'), 429: rateLimited },
      },
    },
    async (request) => {
      const entry = act(request, 'address.delete', { addressId: request.params.id });
      const deleted = await admin.deleteAddress(idOf(request.params.id, 'address'));
      entry['address'] = deleted.address;
      return { success: true };
    },
  );

  adminAddressMailRoutes(app, { admin, route, act });
}

/** An address's live mail: the list, and one mail with its raw message. */
function adminAddressMailRoutes(app: RouteApp, { admin, route, act }: AdminRouteOptions): void {
  app.get(
    routes.adminAddressMails,
    {
      ...route,
      preValidation: strictIntegers('limit', 'offset'),
      schema: {
        hide,
        tags,
        summary: "An address's live mail, newest first",
        params: AdminIdParams,
        querystring: MailsQuery,
        response: {
          200: MailsResponse,
          400: badInput('Malformed id, or limit (1..100) and offset (>= 0) missing.'),
          401: unauthorizedResponse,
          404: errorResponse('No such address.'),
          429: rateLimited,
        },
      },
    },
    async (request) => {
      const { limit, offset } = request.query;
      const entry = act(request, 'mails.list', { addressId: request.params.id, limit, offset });
      const { address, page } = await admin.listMails(idOf(request.params.id, 'address'), limit, offset);
      entry['address'] = address.address;
      return { results: page.results.map(toItem), count: page.count };
    },
  );

  app.get(
    routes.adminAddressMail,
    {
      ...route,
      schema: {
        hide,
        tags,
        summary: 'Read one mail of an address: metadata and raw message',
        params: AdminMailParams,
        response: { 200: FullMail, 400: badInput('Malformed id or uuid.'), 401: unauthorizedResponse, 404: errorResponse('No such mail.'), 429: rateLimited },
      },
    },
    async (request) => {
      const entry = act(request, 'mail.read', { addressId: request.params.id, uuid: request.params.uuid });
      const m = await admin.getMail(idOf(request.params.id, 'address'), uuidOf(request.params.uuid));
      entry['address'] = m.address;
      return { ...toItem(m), raw: rawToString(m.raw) };
    },
  );
}
