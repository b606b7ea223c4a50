// The admin page's side of /api/admin/*. The token the operator types is kept in
// sessionStorage (this tab only, gone when it closes) and sent as a Bearer header with
// every request; no cookie is involved, so no other page can make these requests.
import type {
  AdminAddressesResponse,
  AdminDomain,
  AdminDomainDns,
  AdminDomainPatch,
  AdminDomainsResponse,
  AdminRefusalsResponse,
  AdminSandboxesResponse,
  AdminStats,
  Block,
  BlockKind,
  BlocksResponse,
  DomainStatsResponse,
  FullMail,
  MailsResponse,
  NewAddressResponse,
  SandboxInfo,
} from '@temp-inbox/api';
import { path, routes } from '@temp-inbox/api/routes';

export type { AdminAddress, AdminDomain, AdminDomainDns, AdminDomainsResponse, AdminRefusalsResponse, AdminStats, Block, BlockKind, DomainFigures, FullMail, MailListItem, MailMetadata, SandboxInfo } from '@temp-inbox/api';

const TOKEN_KEY = 'temp-inbox-admin-token';

export const savedToken = {
  get: (): string | null => sessionStorage.getItem(TOKEN_KEY),
  set: (token: string) => sessionStorage.setItem(TOKEN_KEY, token),
  clear: () => sessionStorage.removeItem(TOKEN_KEY),
};

/** An error answer: its status and the API's plain-text sentence. */
export class AdminError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

async function call<T>(token: string, method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(path, { method, headers, credentials: 'omit', body: body === undefined ? undefined : JSON.stringify(body) });
  if (!res.ok) {
    const text = (await res.text()).trim();
    const wait = res.headers.get('retry-after');
    throw new AdminError(res.status, `${text || res.statusText}${res.status === 429 && wait ? ` (try again in ${wait} s)` : ''}`);
  }
  return (await res.json()) as T;
}

const q = encodeURIComponent;

/** The admin API for one token. */
export function adminApi(token: string) {
  return {
    stats: () => call<AdminStats>(token, 'GET', path(routes.adminStats)),
    domainStats: (days: number) => call<DomainStatsResponse>(token, 'GET', `${path(routes.adminDomainStats)}?days=${days}`),
    pool: () => call<AdminDomainsResponse>(token, 'GET', path(routes.adminDomains)),
    addDomain: (domain: string, subdomains: boolean) => call<AdminDomain>(token, 'POST', path(routes.adminDomains), { domain, subdomains }),
    changeDomain: (domain: string, change: AdminDomainPatch) => call<AdminDomain>(token, 'PATCH', path(routes.adminDomain, { domain }), change),
    deleteDomain: (domain: string) => call<unknown>(token, 'DELETE', path(routes.adminDomain, { domain })),
    checkDns: (domain: string) => call<AdminDomainDns>(token, 'GET', path(routes.adminDomainDns, { domain })),
    refusals: (hours: number) => call<AdminRefusalsResponse>(token, 'GET', `${path(routes.adminRefusals)}?hours=${hours}`),
    addresses: (query: string, limit: number, offset: number) => call<AdminAddressesResponse>(token, 'GET', `${path(routes.adminAddresses)}?q=${q(query)}&limit=${limit}&offset=${offset}`),
    createAddress: (name: string, domain: string) =>
      call<NewAddressResponse>(token, 'POST', path(routes.adminAddresses), { ...(name ? { name } : {}), ...(domain ? { domain } : {}) }),
    deleteAddress: (id: number) => call<{ success: boolean }>(token, 'DELETE', path(routes.adminAddress, { id })),
    mails: (id: number, limit: number, offset: number) => call<MailsResponse>(token, 'GET', `${path(routes.adminAddressMails, { id })}?limit=${limit}&offset=${offset}`),
    mail: (id: number, uuid: string) => call<FullMail>(token, 'GET', path(routes.adminAddressMail, { id, uuid })),
    blocks: () => call<BlocksResponse>(token, 'GET', path(routes.adminBlocks)),
    addBlock: (kind: BlockKind, value: string, note: string) => call<Block>(token, 'POST', path(routes.adminBlocks), { kind, value, ...(note ? { note } : {}) }),
    removeBlock: (id: number) => call<{ success: boolean }>(token, 'DELETE', path(routes.adminBlock, { id })),
    sandboxes: () => call<AdminSandboxesResponse>(token, 'GET', path(routes.adminSandboxes)),
    createSandbox: (name: string, password: string) => call<SandboxInfo>(token, 'POST', path(routes.adminSandboxes), { name, password }),
    setSandboxPassword: (id: number, password: string) => call<{ success: boolean }>(token, 'PUT', path(routes.adminSandboxPassword, { id }), { password }),
    deleteSandbox: (id: number) => call<{ success: boolean }>(token, 'DELETE', path(routes.adminSandbox, { id })),
  };
}

export type AdminApi = ReturnType<typeof adminApi>;

/** The mail domains, for the new-address form (the public UI's configuration). */
export async function mailDomains(): Promise<string[]> {
  const res = await fetch(path(routes.uiConfig));
  return res.ok ? ((await res.json()) as { domains: string[] }).domains : [];
}

export const when = (iso: string) => new Date(iso).toLocaleString();

export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 ** 3) return `${(n / 1024 ** 2).toFixed(1)} MiB`;
  return `${(n / 1024 ** 3).toFixed(2)} GiB`;
}
