// Domain errors carry a typed code, mapped once to an HTTP status (http/errors.ts)
// and once to an SMTP reply (smtp/replies.ts). Messages are safe to show clients.
export type ErrorCode =
  | 'bad_request'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'too_large'
  | 'unsupported_media_type'
  | 'rate_limited'
  | 'unavailable';

export class AppError extends Error {
  override name = 'AppError';
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

export const badRequest = (msg: string) => new AppError('bad_request', msg);
export const unauthorized = (msg = 'Missing or invalid credentials.') => new AppError('unauthorized', msg);
export const forbidden = (msg: string) => new AppError('forbidden', msg);
export const notFound = (msg = 'Not found.') => new AppError('not_found', msg);
export const conflict = (msg: string) => new AppError('conflict', msg);
export const unsupportedMediaType = (msg: string) => new AppError('unsupported_media_type', msg);
export const unavailable = (msg: string) => new AppError('unavailable', msg);
