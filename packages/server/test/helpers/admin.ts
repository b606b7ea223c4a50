// The admin token the admin tests run with (ADMIN_TOKEN: at least 32 characters), and a
// request to /api/admin/* that carries it.
import { request, type HttpResult, type RequestOptions } from './harness.js';

export const ADMIN_TOKEN = 'admin-token-for-tests-0123456789-abcdefgh';
export const ADMIN_AUTH = { authorization: `Bearer ${ADMIN_TOKEN}` };

export function adminRequest(server: { httpUrl: string }, path: string, opts: RequestOptions = {}): Promise<HttpResult> {
  return request(server.httpUrl, path, { ...opts, headers: { ...ADMIN_AUTH, ...opts.headers } });
}
