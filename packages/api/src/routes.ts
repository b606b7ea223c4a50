// Every route the server registers, in one table, and the path builder the SDK and the
// web UI call them with (docs/architecture.md "One API contract"). Imports nothing: the
// client SDK carries a generated copy of this file (packages/client/scripts/api-types.mjs),
// and the web UI imports it as @temp-inbox/api/routes without the schemas.
// Parameters are spelled `:name`, as Fastify declares them.

/** Route paths, exactly as the interface writes them (note /api/mail vs /api/mails). */
export const routes = {
  // The v1.0.0 API (docs/api.md).
  newAddress: '/api/new_address',
  challenge: '/api/challenge',
  settings: '/api/settings',
  deleteAddress: '/api/delete_address',
  // The domain pool's active domains (not in the v1.0.0 interface).
  domains: '/api/domains',
  mails: '/api/mails',
  searchMails: '/api/mails/search',
  waitMails: '/api/mails/wait',
  events: '/api/events',
  mail: '/api/mail/:uuid',
  parsedMail: '/api/mail/:uuid/parsed',
  mailReport: '/api/mail/:uuid/report',
  deleteMail: '/api/mails/:uuid',
  clearInbox: '/api/clear_inbox',
  attachment: '/api/attachment/:uuid/:attachmentId',
  sessionAddresses: '/api/session/addresses',
  switchAddress: '/api/switch_address',
  openAddress: '/api/open_address',
  logout: '/api/logout',
  webhook: '/api/webhook',
  webhookDeliveries: '/api/webhook/deliveries',
  healthCheck: '/health_check',
  openapi: '/openapi.json',
  metrics: '/metrics',

  // Sandboxes (SANDBOXES): a login's own view of its mail and chaos settings.
  sandboxToken: '/api/sandbox/token',
  sandbox: '/api/sandbox',
  sandboxChaos: '/api/sandbox/chaos',

  // The operators' admin (ADMIN_TOKEN): its API and its page.
  adminAddresses: '/api/admin/addresses',
  adminAddress: '/api/admin/addresses/:id',
  adminAddressMails: '/api/admin/addresses/:id/mails',
  adminAddressMail: '/api/admin/addresses/:id/mails/:uuid',
  adminBlocks: '/api/admin/blocks',
  adminBlock: '/api/admin/blocks/:id',
  adminDomains: '/api/admin/domains',
  adminDomain: '/api/admin/domains/:domain',
  adminDomainDns: '/api/admin/domains/:domain/dns',
  adminStats: '/api/admin/stats',
  adminDomainStats: '/api/admin/domains/stats',
  adminTombstones: '/api/admin/tombstones',
  adminRefusals: '/api/admin/refusals',
  adminSandboxes: '/api/admin/sandboxes',
  adminSandbox: '/api/admin/sandboxes/:id',
  adminSandboxPassword: '/api/admin/sandboxes/:id/password',
  adminPage: '/admin',
  adminPageSlash: '/admin/',

  // The web UI's configuration (its files are served from the build as they are).
  uiConfig: '/ui-config.json',

  // MCP over HTTP (MCP=on): the Streamable HTTP transport for AI agents (docs/mcp.md).
  mcp: '/mcp',

  // mail.tm's API (MAILTM_API), mounted at mounts.mailtm.
  mailtmDomains: '/mailtm/domains',
  mailtmDomain: '/mailtm/domains/:id',
  mailtmAccounts: '/mailtm/accounts',
  mailtmAccount: '/mailtm/accounts/:id',
  mailtmToken: '/mailtm/token',
  mailtmMe: '/mailtm/me',
  mailtmMessages: '/mailtm/messages',
  mailtmMessage: '/mailtm/messages/:id',
  mailtmMessageDownload: '/mailtm/messages/:id/download',
  mailtmMessageAttachment: '/mailtm/messages/:id/attachment/:attachment',
  mailtmSource: '/mailtm/sources/:id',
  mailtmMercure: '/mailtm/.well-known/mercure',

  // Mailpit's API v1 for sandboxes, mounted at mounts.mailpit.
  mailpitInfo: '/mailpit/api/v1/info',
  mailpitWebui: '/mailpit/api/v1/webui',
  mailpitChaos: '/mailpit/api/v1/chaos',
  mailpitMessages: '/mailpit/api/v1/messages',
  mailpitSearch: '/mailpit/api/v1/search',
  mailpitMessage: '/mailpit/api/v1/message/:id',
  mailpitMessageHeaders: '/mailpit/api/v1/message/:id/headers',
  mailpitMessageRaw: '/mailpit/api/v1/message/:id/raw',
  mailpitMessagePart: '/mailpit/api/v1/message/:id/part/:part',
  mailpitMessagePartThumb: '/mailpit/api/v1/message/:id/part/:part/thumb',
  mailpitMessageHtmlCheck: '/mailpit/api/v1/message/:id/html-check',
  mailpitMessageLinkCheck: '/mailpit/api/v1/message/:id/link-check',
  mailpitMessageSpamCheck: '/mailpit/api/v1/message/:id/sa-check',
  mailpitMessageRelease: '/mailpit/api/v1/message/:id/release',
  mailpitTags: '/mailpit/api/v1/tags',
  mailpitTag: '/mailpit/api/v1/tags/:tag',
  mailpitSend: '/mailpit/api/v1/send',
  mailpitView: '/mailpit/view/:file',
  // cypress-mailpit's doubled slash, redirected to mailpitView.
  mailpitViewDoubleSlash: '/mailpit//view/:file',

  // MailHog's API for sandboxes, mounted at mounts.mailhog.
  mailhogMessagesV2: '/mailhog/api/v2/messages',
  mailhogSearch: '/mailhog/api/v2/search',
  mailhogJim: '/mailhog/api/v2/jim',
  mailhogMessages: '/mailhog/api/v1/messages',
  mailhogMessage: '/mailhog/api/v1/messages/:id',
  mailhogMessageDownload: '/mailhog/api/v1/messages/:id/download',
  mailhogMessageRelease: '/mailhog/api/v1/messages/:id/release',
} as const;

export type RouteName = keyof typeof routes;
export type Route = (typeof routes)[RouteName];

/**
 * Where the compatible APIs are mounted: the server registers each group as a plugin with
 * this prefix (so that its own 404 and error handler cover every path under it) and its
 * routes with `within(mount, route)`.
 */
export const mounts = {
  mailtm: '/mailtm',
  mailpit: '/mailpit',
  mailhog: '/mailhog/api',
  // The built web UI's files, and the admin page's assets: one route per file of the build.
  ui: '/',
  adminAssets: '/admin/assets/',
} as const;

/** The names of a route's `:name` parameters. */
export type ParamName<P extends string> = P extends `${string}:${infer Name}/${infer Rest}` ? Name | ParamName<`/${Rest}`> : P extends `${string}:${infer Name}` ? Name : never;

/** A value for each parameter of a route. */
export type PathParams<P extends string> = { [K in ParamName<P>]: string | number };

/**
 * A route's path with each `:name` replaced by its parameter, URI-encoded:
 * `path(routes.mail, { uuid })` is `/api/mail/<uuid>`. A query string is the caller's to add.
 */
export function path<P extends string>(route: P, ...params: ParamName<P> extends never ? [] : [PathParams<P>]): string {
  const values = (params[0] ?? {}) as Record<string, string | number | undefined>;
  return route.replace(/:([A-Za-z][A-Za-z0-9]*)/g, (_, name: string) => {
    const value = values[name];
    if (value === undefined) throw new TypeError(`path(${route}) needs the parameter "${name}".`);
    return encodeURIComponent(String(value));
  });
}

/** A route as a plugin mounted at `mount` registers it: the route without the mount. */
export function within<M extends string, P extends string>(mount: M, route: P): P extends `${M}${infer Rest}` ? Rest : never {
  if (!route.startsWith(`${mount}/`)) throw new TypeError(`The route ${route} is not under ${mount}.`);
  return route.slice(mount.length) as P extends `${M}${infer Rest}` ? Rest : never;
}
