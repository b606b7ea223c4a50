// The form of a webhook signing secret (the Standard Webhooks key format), in the domain
// so that configuration (WEBHOOK_SECRET) checks it without importing the webhooks capability.

/** A secret as WEBHOOK_SECRET takes it: whsec_ and the base64 of 24 to 64 bytes. */
export function isSecret(value: string): boolean {
  const m = /^whsec_([A-Za-z0-9+/]+={0,2})$/.exec(value);
  if (!m || m[1]!.length % 4 !== 0) return false;
  const bytes = Buffer.from(m[1]!, 'base64').length;
  return bytes >= 24 && bytes <= 64;
}
