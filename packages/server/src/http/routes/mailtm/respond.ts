// How the mail.tm-compatible API answers (docs/api.md "mail.tm-compatible API"): the
// format each request negotiates, its credentials (a Bearer token only, as mail.tm's), and
// every error in mail.tm's own bodies and statuses instead of our plain text.
import { Readable } from 'node:stream';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../../domain/errors.js';
import type { AuthenticatedAddress, MailService } from '../../../mail/service.js';
import { MailtmViolations } from '../../../mailtm/service.js';
import { CONTENT_TYPE, errorBody, negotiate, PAGE_SIZE, violationsBody, type Format } from '../../../mailtm/shapes.js';
import { STATUS, STORAGE_FULL } from '../../errors.js';
import { isStorageFull } from '../../../storage/storage-state.js';

export const formatOf = (request: FastifyRequest): Format => negotiate(request.headers.accept);

export function sendJson(reply: FastifyReply, status: number, format: Format, body: unknown): FastifyReply {
  const ready = typeof body === 'string' || Buffer.isBuffer(body) || body instanceof Readable;
  return reply.code(status).type(CONTENT_TYPE[format]).send(ready ? body : JSON.stringify(body));
}

/** A 401 as mail.tm's token checker words it (JSON whatever the Accept header). */
export class MailtmAuthError extends Error {
  override name = 'MailtmAuthError';
}

const BEARER_RE = /^Bearer\s+(\S+)$/i;
const JWT_RE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/** Whether a token's own exp has passed (read without trusting it: it only chooses the wording of a 401). */
function expired(token: string): boolean {
  try {
    const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as { exp?: unknown };
    return typeof claims.exp === 'number' && claims.exp * 1000 <= Date.now();
  } catch {
    return false;
  }
}

/** The address a token (of POST /token, or any of our address tokens) stands for; 401 in mail.tm's words otherwise. */
export async function accountOf(token: string | undefined, mail: MailService): Promise<AuthenticatedAddress> {
  if (!token) throw new MailtmAuthError('JWT Token not found');
  if (!JWT_RE.test(token)) throw new MailtmAuthError('Invalid JWT Token');
  try {
    return await mail.authenticate(token);
  } catch (err) {
    if (err instanceof AppError && err.code === 'unauthorized') throw new MailtmAuthError(expired(token) ? 'Expired JWT Token' : 'Invalid JWT Token');
    throw err;
  }
}

/** The Bearer token of the Authorization header, if any. */
export const bearerOf = (request: FastifyRequest): string | undefined => BEARER_RE.exec(request.headers.authorization ?? '')?.[1];

export const authenticate = (request: FastifyRequest, mail: MailService) => accountOf(bearerOf(request), mail);

/** `?page=`: 1 when absent; a whole number from 1 on, else 400 as mail.tm's. */
export function pageOf(request: FastifyRequest): { page: number | undefined; offset: number } {
  const raw = (request.query as Record<string, unknown>)['page'];
  if (raw === undefined) return { page: undefined, offset: 0 };
  if (typeof raw !== 'string' || !/^\d{1,15}$/.test(raw) || Number(raw) < 1) throw new AppError('bad_request', 'Page should not be less than 1');
  const page = Number(raw);
  return { page, offset: Math.min((page - 1) * PAGE_SIZE, Number.MAX_SAFE_INTEGER) };
}

/** The error handler of every /mailtm route: mail.tm's statuses and bodies, never our plain text. */
export function mailtmErrorHandler(err: FastifyError | Error, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const format = formatOf(request);
  if (err instanceof MailtmViolations) return sendJson(reply, 422, format, violationsBody(format, err.violations));
  if (err instanceof MailtmAuthError) return sendJson(reply, 401, 'json', { code: 401, message: err.message });
  if (err instanceof AppError) {
    if (err.retryAfterSeconds !== undefined) reply.header('retry-after', String(err.retryAfterSeconds));
    switch (err.code) {
      // POST /token's refusal, as mail.tm's token endpoint words it.
      case 'unauthorized':
        return sendJson(reply, 401, 'json', { code: 401, message: err.message });
      case 'not_found':
        return sendJson(reply, 404, format, errorBody(format, 'Not Found'));
      case 'forbidden':
        return sendJson(reply, 403, format, errorBody(format, 'Access Denied.'));
      default:
        return sendJson(reply, STATUS[err.code], format, errorBody(format, err.message));
    }
  }
  const fe = err as FastifyError;
  if (fe.validation) return sendJson(reply, 400, format, errorBody(format, fe.message));
  const status = fe.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500 && typeof fe.code === 'string' && fe.code.startsWith('FST_')) {
    if (fe.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      const type = (request.headers['content-type'] ?? '').split(';')[0]!.slice(0, 100);
      return sendJson(reply, 415, format, errorBody(format, `The content-type "${type}" is not supported. Supported MIME types are "application/ld+json", "application/json", "application/merge-patch+json".`));
    }
    // A body that is not JSON (or none where one is needed), as API Platform's decoder says it.
    if (fe.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || fe.code === 'FST_ERR_CTP_EMPTY_JSON_BODY') return sendJson(reply, 400, format, errorBody(format, 'Syntax error'));
    return sendJson(reply, status, format, errorBody(format, fe.message));
  }
  if (isStorageFull(err)) {
    request.log.error({ err }, 'request failed: the storage is full');
    reply.header('retry-after', String(STORAGE_FULL.retryAfterSeconds));
    return sendJson(reply, STORAGE_FULL.status, format, errorBody(format, STORAGE_FULL.message));
  }
  request.log.error({ err }, 'request failed');
  return sendJson(reply, 500, format, errorBody(format, `Internal Server Error (request id ${request.id})`));
}
