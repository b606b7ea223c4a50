// What the route groups of an address's mail (mails.ts) share: the security scheme and
// the error answers their schemas declare.
import { errorResponse } from '../errors.js';

export const bearer = [{ bearer: [] }];
export const unauthorizedResponse = errorResponse('JWT missing, malformed, expired, or its address was deleted.');
export const notFoundResponse = errorResponse('Unknown, foreign, deleted or malformed uuid.');
export const rateLimited = errorResponse('Rate limit exceeded; see Retry-After.');
