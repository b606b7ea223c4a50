// ABUSE_CONTACT: where the operator takes abuse reports, an email address or an http(s) URL,
// shown in the web UI's footer and in SMTP's policy refusals. It goes into SMTP reply lines
// as it is, so it is printable ASCII without spaces, and short.

/** Longest ABUSE_CONTACT taken (an SMTP reply line is at most 512 octets, RFC 5321 §4.5.3.1.5). */
export const MAX_ABUSE_CONTACT_CHARS = 200;

const EMAIL = /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+$/;

/** The contact as given when it is an email address or an http(s) URL, else undefined. */
export function checkAbuseContact(raw: string): string | undefined {
  if (raw.length === 0 || raw.length > MAX_ABUSE_CONTACT_CHARS || !/^[\x21-\x7e]+$/.test(raw)) return undefined;
  if (EMAIL.test(raw)) return raw;
  try {
    const url = new URL(raw);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.hostname !== '' ? raw : undefined;
  } catch {
    return undefined;
  }
}
