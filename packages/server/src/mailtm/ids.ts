// Identifiers the mail.tm-compatible API shows (docs/decisions.md "mail.tm accounts"): an
// account's id and a domain's id, derived with a key made from JWT_SECRET, 24 hex
// characters like mail.tm's. An account id names one address for its whole life and a new
// address of the same name gets another; it tells nothing of the address's number, its
// time or how many addresses there are, and no table is needed to look one up: every route
// that takes an account id also has that account's token, whose id is computed and compared.
import { createHmac } from 'node:crypto';

export interface MailtmIds {
  account(address: { id: number; createdAt: number }): string;
  domain(domain: string): string;
}

export function createMailtmIds(secret: string): MailtmIds {
  const key = createHmac('sha256', secret).update('temp-inbox mail.tm ids').digest();
  const id = (text: string) => createHmac('sha256', key).update(text).digest('hex').slice(0, 24);
  return {
    account: (a) => id(`account:${a.id}:${a.createdAt}`),
    domain: (d) => id(`domain:${d}`),
  };
}
