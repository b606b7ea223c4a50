// One mapping from errors to HTTP replies: plain text, a short sentence, never a
// stack trace or an internal message (docs/api.md "Conventions"; docs/decisions.md "Errors").
import { STATUS_CODES } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, type ErrorCode } from '../domain/errors.js';
import { isStorageFull, type StorageState } from '../storage/storage-state.js';

export const STATUS: Record<ErrorCode, number> = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  unavailable: 503,
};

export function sendText(reply: FastifyReply, status: number, message: string): FastifyReply {
  return reply.code(status).type('text/plain; charset=utf-8').send(message);
}

/** The 503 of a write the store could not take for lack of space (SQLITE_FULL, ENOSPC, PostgreSQL's disk_full): nothing is wrong with the request. */
export const STORAGE_FULL = { status: 503, retryAfterSeconds: 60, message: 'The server cannot store anything now: its disk is full. Try again later.' } as const;

export function installErrorHandling(app: FastifyInstance, storage?: StorageState): void {
  app.setErrorHandler((err: FastifyError | AppError | Error, request, reply) => {
    if (err instanceof AppError) {
      if (err.retryAfterSeconds !== undefined) reply.header('retry-after', String(err.retryAfterSeconds));
      return sendText(reply, STATUS[err.code], err.message);
    }
    const fe = err as FastifyError;
    if (fe.validation) {
      return sendText(reply, 400, `Invalid request: ${validationMessage(fe)}.`);
    }
    const status = fe.statusCode;
    // A body of a type no parser takes: say which one to send (Fastify says only "Unsupported Media Type").
    if (fe.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return sendText(reply, 415, unsupportedTypeMessage(request.headers['content-type']));
    // Fastify's own client errors (bad JSON, body too large) have safe messages.
    if (typeof status === 'number' && status >= 400 && status < 500 && typeof fe.code === 'string' && fe.code.startsWith('FST_')) {
      return sendText(reply, status, fe.message.endsWith('.') ? fe.message : `${fe.message}.`);
    }
    // A client that went away mid-request (an upload cut short): no one to answer, nothing wrong here.
    if (fe.code === 'ECONNRESET' || fe.code === 'ECONNABORTED' || (request.raw.destroyed && typeof status === 'number' && status < 500)) {
      request.log.info({ code: fe.code }, 'client went away during the request');
      return sendText(reply, 400, 'Request aborted.');
    }
    if (isStorageFull(err)) {
      storage?.failed(err);
      request.log.error({ err }, 'request failed: the storage is full');
      reply.header('retry-after', String(STORAGE_FULL.retryAfterSeconds));
      return sendText(reply, STORAGE_FULL.status, STORAGE_FULL.message);
    }
    request.log.error({ err }, 'request failed');
    return sendText(reply, 500, `Internal server error (request id ${request.id}).`);
  });
  app.setNotFoundHandler((request, reply) => sendText(reply, 404, `No route ${request.method} ${request.url.split('?')[0]}.`));
}

interface ValidationIssue {
  keyword: string;
  instancePath: string;
  schemaPath: string;
  params: Record<string, unknown>;
}

/**
 * Ajv's message, except for a value outside a union of literals (a state, a kind): Ajv says
 * "must be equal to constant" once per literal; this names the values taken instead.
 */
function validationMessage(fe: FastifyError): string {
  const issues = (fe.validation ?? []) as unknown as ValidationIssue[];
  const anyOf = issues.find((e) => e.keyword === 'anyOf');
  if (!anyOf) return fe.message;
  const branches = issues.filter((e) => e.schemaPath.startsWith(`${anyOf.schemaPath}/`));
  const branchOf = (e: ValidationIssue) => e.schemaPath.slice(anyOf.schemaPath.length + 1).split('/')[0]!;
  const allowed = new Map<string, unknown>();
  for (const e of branches) if (e.keyword === 'const') allowed.set(branchOf(e), e.params['allowedValue']);
  const everyBranchLiteral = branches.every((e) => allowed.has(branchOf(e)));
  if (allowed.size === 0 || !everyBranchLiteral || ![...allowed.values()].every((v) => typeof v === 'string')) return fe.message;
  return `${fe.validationContext ?? 'body'}${anyOf.instancePath} must be one of ${[...allowed.values()].join(', ')}`;
}

const SEND_JSON = 'Send the body as application/json (Content-Type: application/json).';

/** The 415 of a body that is not JSON; the type sent is named when it is a plain media type. */
export function unsupportedTypeMessage(contentType: string | undefined): string {
  if (contentType === undefined || contentType.trim() === '') return `The request has a body but no Content-Type. ${SEND_JSON}`;
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  return /^[\w.+-]{1,64}\/[\w.+-]{1,64}$/.test(type) ? `Content-Type ${type} is not accepted here. ${SEND_JSON}` : `That Content-Type is not accepted here. ${SEND_JSON}`;
}

/** The OpenAPI description of a plain-text error response. */
export function errorResponse(description: string) {
  return { description, content: { 'text/plain': { schema: { type: 'string' } } } } as const;
}

/**
 * Fastify's `frameworkErrors`: URLs the router refuses before any route runs
 * (a bad percent-escape, a path parameter over maxParamLength). Fastify's default
 * answers these in JSON and echoes the path; we answer like every other error.
 */
export function frameworkErrors(err: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  // No uuid or id is that long: such a path names nothing (docs/decisions.md: malformed uuid -> 404).
  if (err.code === 'FST_ERR_MAX_PARAM_LENGTH') void sendText(reply, 404, 'Not found.');
  else void sendText(reply, 400, 'Malformed URL.');
}

/** A whole plain-text HTTP response that closes the connection, for sockets no route answers. */
const plainResponse = (status: number, text: string) =>
  `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(text)}\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n${text}`;

/**
 * Fastify's `clientErrorHandler`: requests Node's HTTP parser rejects (control
 * bytes in a header, an oversized header block, not HTTP at all). Fastify's
 * default replies in JSON; this one in plain text, then closes the socket.
 */
export function clientErrorHandler(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, text] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'Request header fields too large.']
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request timed out.']
        : [400, 'Malformed HTTP request.'];
  if (socket.writable) socket.write(plainResponse(status, text));
  socket.destroy(err);
}

/**
 * Requests Node answers before any route sees them, answered in plain text too: an
 * `Expect` other than 100-continue (Node's own 417 has an empty body) and CONNECT (Node
 * closes the socket without a word when nothing listens for it).
 */
export function answerOddRequests(server: Server): void {
  server.on('checkExpectation', (_req: IncomingMessage, res: ServerResponse) => {
    const text = 'Only "Expect: 100-continue" is understood.';
    res.writeHead(417, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(text), 'x-content-type-options': 'nosniff', connection: 'close' }).end(text);
  });
  server.on('connect', (_req: IncomingMessage, socket: Socket) => {
    socket.on('error', () => undefined);
    socket.end(plainResponse(405, 'CONNECT is not supported here.'));
  });
}
