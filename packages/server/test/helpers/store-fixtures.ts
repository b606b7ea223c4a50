// Rows the store contract's cases make (store-contract.ts and the role files it runs:
// webhook-store-contract.ts, report-summary-store-contract.ts).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { AddressRecord, NewMail, Store } from '../../src/storage/store.js';

/** Millisecond timestamps of realistic size (beyond 32 bits). */
export const T0 = 1_700_000_000_000;

let mailSeq = 0;

/** A mail with an empty trace line whose whole message is `raw` (or a small default). */
export function newMail(to: AddressRecord, createdAt: number, over: Partial<NewMail> & { raw?: Buffer } = {}): NewMail {
  const n = ++mailSeq;
  const { raw, ...rest } = over;
  return {
    uuid: randomUUID(),
    addressId: to.id,
    address: to.address,
    source: `sender${n}@example.org`,
    messageId: `<m${n}@example.org>`,
    metadata: JSON.stringify({ subject: `mail ${n}`, attachments: [] }),
    trace: Buffer.alloc(0),
    body: { raw: raw ?? Buffer.from(`Subject: mail ${n}\r\n\r\nbody ${n}\r\n`, 'latin1'), attachments: [] },
    createdAt,
    ...rest,
  };
}

/** A new address, created at `createdAt`; the case fails if the name is taken. */
export async function address(store: Store, name: string, createdAt = T0): Promise<AddressRecord> {
  const a = await store.createAddress(name, createdAt);
  assert.ok(a, `could not create ${name}`);
  return a;
}
