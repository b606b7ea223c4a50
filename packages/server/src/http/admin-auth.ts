// Who may use /api/admin/* (docs/decisions.md "Admin"): a request whose Authorization
// header is exactly "Bearer <ADMIN_TOKEN>". Both sides are hashed to the same length
// before a constant-time comparison, so neither the token's length nor a matching
// prefix shows in the time an answer takes. The token itself is never logged: its
// holder is named by a fingerprint (an HMAC under the session secret), which changes
// when the token does and from which the token cannot be recovered or tested offline.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

export interface AdminAuth {
  /** Whether an Authorization header value carries the admin token. */
  verify(header: string | undefined): boolean;
  /** The holder of the token as the log names them, e.g. "admin token 3f2a9c1e4b7d". */
  holder: string;
}

const digest = (text: string) => createHash('sha256').update(text).digest();

export function createAdminAuth(token: string, fingerprintKey: string): AdminAuth {
  const expected = digest(`Bearer ${token}`);
  const fingerprint = createHmac('sha256', fingerprintKey).update('temp-inbox admin token holder\0').update(token).digest('hex').slice(0, 12);
  return {
    verify: (header) => header !== undefined && timingSafeEqual(digest(header), expected),
    holder: `admin token ${fingerprint}`,
  };
}
