// Sandbox names and the SANDBOXES variable (docs/decisions.md "Sandboxes"). Pure rules,
// shared by the configuration (a leaf) and the sandboxes feature.
import { MAX_PASSWORD_CHARS } from './passwords.js';

/** The reserved domain of sandbox addresses (RFC 2606): no pool domain can ever be it. */
export const SANDBOX_DOMAIN = 'sandbox.invalid';

/** Whether an address (lower-cased) is a sandbox's: such an address is kept as long as its sandbox. */
export const isSandboxAddress = (address: string): boolean => address.endsWith(`@${SANDBOX_DOMAIN}`);

const NAME_RE = /^[a-z0-9]([a-z0-9._-]{0,62}[a-z0-9])?$/;

/** A sandbox name as stored (lower-cased), or undefined when it is not 1-64 characters of a-z, 0-9, '.', '_', '-' (a valid local part). */
export function sandboxName(raw: string): string | undefined {
  const name = raw.toLowerCase();
  return NAME_RE.test(name) && !name.includes('..') ? name : undefined;
}

export const SANDBOX_NAME_RULE = '1-64 characters of a-z, 0-9, ".", "_" or "-", starting and ending with a letter or digit, without ".."';

/** Why a password cannot be a sandbox's, or undefined when it can. */
export function sandboxPasswordProblem(password: string): string | undefined {
  if (password.length < 1) return 'A sandbox password must not be empty.';
  if (password.length > MAX_PASSWORD_CHARS) return `A sandbox password has at most ${MAX_PASSWORD_CHARS} characters.`;
  // SMTP AUTH PLAIN separates fields with NUL; control characters would be refused there.
  if ([...password].some((ch) => ch.charCodeAt(0) < 0x20 || ch.charCodeAt(0) === 0x7f)) return 'A sandbox password must not contain control characters.';
  return undefined;
}

/**
 * SANDBOXES="team-a:secret team-b:secret2": space-separated name:password pairs (as
 * Mailpit's MP_SMTP_AUTH). The password is everything after the first ':'. Throws an
 * Error whose message says what is wrong, never repeating a password.
 */
export function parseSandboxes(raw: string): { name: string; password: string }[] {
  const out: { name: string; password: string }[] = [];
  const seen = new Set<string>();
  for (const [i, pair] of raw.split(/\s+/).filter(Boolean).entries()) {
    const colon = pair.indexOf(':');
    if (colon <= 0) throw new Error(`pair ${i + 1} is not name:password`);
    const name = sandboxName(pair.slice(0, colon));
    if (!name) throw new Error(`pair ${i + 1}'s name is not ${SANDBOX_NAME_RULE}`);
    const problem = sandboxPasswordProblem(pair.slice(colon + 1));
    if (problem) throw new Error(`pair ${i + 1} (${name}): ${problem.replace(/\.$/, '')}`);
    if (seen.has(name)) throw new Error(`${name} is named twice`);
    seen.add(name);
    out.push({ name, password: pair.slice(colon + 1) });
  }
  return out;
}
