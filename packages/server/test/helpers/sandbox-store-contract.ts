// The storage contract's sandbox cases (store.ts SandboxStore; docs/decisions.md
// "Sandboxes"), run by store-contract.ts against every backend: a sandbox is created with
// its address and updated in place, found, listed and counted; password and chaos are set;
// a mail's envelope comes back as stored; the quota's trim removes the oldest mail and never
// the newest; the purge keeps a sandbox's address past ADDRESS_TTL and its mail for its own
// retention; and a sandbox goes with its address.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { NewMail, SandboxRecord, Store } from '../../src/storage/store.js';

type Case = [name: string, run: (store: Store) => Promise<void>];

const T0 = 1_700_000_000_000;
const DAY = 86_400_000;

const put = (store: Store, name: string, over: Partial<Parameters<Store['putSandbox']>[0]> = {}) =>
  store.putSandbox({ name, address: `${name}@sandbox.invalid`, passwordHash: `hash-of-${name}`, maxMails: 1000, maxBytes: 1 << 20, retentionMs: 7 * DAY, at: T0, ...over });

function mailOf(s: Pick<SandboxRecord, 'addressId' | 'address'>, createdAt: number, bytes = 10, envelope?: NewMail['envelope']): NewMail {
  return {
    uuid: randomUUID(),
    addressId: s.addressId,
    address: s.address,
    source: 'app@staging.example',
    messageId: `<${randomUUID()}@x>`,
    metadata: JSON.stringify({ subject: 'm', attachments: [] }),
    trace: Buffer.alloc(0),
    body: { raw: Buffer.alloc(bytes, 0x61), attachments: [] },
    createdAt,
    ...(envelope ? { envelope } : {}),
  };
}

export const SANDBOX_CASES: Case[] = [
  [
    'sandboxes: created with their address, updated in place by name, found, listed by name, counted; password and chaos set',
    async (store) => {
      assert.equal(await store.countSandboxes(), 0);
      const b = await put(store, 'team-b');
      const a = await put(store, 'team-a', { maxMails: 5 });
      assert.equal(a.address, 'team-a@sandbox.invalid');
      assert.equal((await store.findAddress('team-a@sandbox.invalid'))?.id, a.addressId);
      assert.equal(a.chaos, '{}');
      const again = await put(store, 'team-a', { passwordHash: 'new-hash', maxMails: 7, at: T0 + 5 });
      assert.equal(again.id, a.id);
      assert.equal(again.addressId, a.addressId, 'the same address: its mail is kept');
      assert.equal(again.passwordHash, 'new-hash');
      assert.equal(again.maxMails, 7);
      assert.equal(again.createdAt, T0);
      assert.equal(again.updatedAt, T0 + 5);
      assert.deepEqual((await store.listSandboxes()).map((s) => s.name), ['team-a', 'team-b']);
      assert.equal(await store.countSandboxes(), 2);
      assert.equal((await store.getSandbox(b.id))?.name, 'team-b');
      assert.equal(await store.findSandbox('nobody'), undefined);
      assert.equal(await store.setSandboxPassword(b.id, 'rotated', T0 + 9), true);
      assert.equal((await store.findSandbox('team-b'))?.passwordHash, 'rotated');
      assert.equal(await store.setSandboxPassword(999_999, 'x', T0), false);
      const chaos = await store.setSandboxChaos(b.id, '{"sender":{"errorCode":451,"probability":50}}', T0 + 10);
      assert.equal(chaos?.chaos, '{"sender":{"errorCode":451,"probability":50}}');
      assert.equal(await store.setSandboxChaos(999_999, '{}', T0), undefined);
    },
  ],
  [
    "sandboxes: a mail's envelope is stored and read back in every shape; other mail has none",
    async (store) => {
      const s = await put(store, 'env');
      const envelope = { from: '', to: ['alice@customer.com', 'hidden@audit.example'] };
      const m = mailOf(s, T0, 10, envelope);
      const [id] = await store.insertMails([m]);
      const plain = await store.createAddress('plain@example.com', T0);
      await store.insertMails([mailOf({ addressId: plain!.id, address: plain!.address }, T0)]);
      assert.deepEqual((await store.listMails(s.addressId, 10, 0)).results[0]?.envelope, envelope);
      assert.deepEqual((await store.getMail(s.addressId, m.uuid))?.envelope, envelope);
      assert.deepEqual((await store.setSeen(s.addressId, m.uuid, true))?.envelope, envelope);
      assert.equal((await store.listMails(plain!.id, 10, 0)).results[0]?.envelope, undefined);
      assert.equal(typeof id, 'number');
    },
  ],
  [
    'sandboxes: trimMails removes the oldest live mail past the count or the bytes, never the newest',
    async (store) => {
      const s = await put(store, 'quota');
      const mails = [0, 1, 2, 3, 4].map((i) => mailOf(s, T0 + i, 100));
      for (const m of mails) await store.insertMails([m]);
      assert.deepEqual((await store.trimMails(s.addressId, 3, 0)).sort(), [mails[0]!.uuid, mails[1]!.uuid].sort());
      assert.deepEqual((await store.listMails(s.addressId, 10, 0)).results.map((m) => m.uuid), [mails[4]!.uuid, mails[3]!.uuid, mails[2]!.uuid]);
      assert.deepEqual(await store.trimMails(s.addressId, 3, 0), [], 'nothing more to remove');
      // 250 bytes: two mails of 100 fit, the third is past it.
      assert.deepEqual(await store.trimMails(s.addressId, 0, 250), [mails[2]!.uuid]);
      // Smaller than the newest alone: the newest stays.
      assert.deepEqual(await store.trimMails(s.addressId, 0, 50), [mails[3]!.uuid]);
      assert.deepEqual((await store.listMails(s.addressId, 10, 0)).results.map((m) => m.uuid), [mails[4]!.uuid]);
    },
  ],
  [
    "sandboxes: the purge keeps a sandbox's address past ADDRESS_TTL and its mail for its own retention; a sandbox goes with its address",
    async (store) => {
      const s = await put(store, 'kept', { retentionMs: 2 * DAY });
      const plain = (await store.createAddress('old@example.com', T0))!;
      const old = mailOf(s, T0);
      const recent = mailOf(s, T0 + 3 * DAY);
      await store.insertMails([old, recent, mailOf({ addressId: plain.id, address: plain.address }, T0)]);
      const now = T0 + 4 * DAY;
      // Every ordinary cutoff past everything: the plain address and its mail go, the sandbox's do not.
      await store.purge({ mailBefore: now, addressBefore: now, sessionBefore: now, now });
      assert.equal(await store.getAddress(plain.id), undefined);
      assert.ok(await store.getAddress(s.addressId));
      assert.deepEqual((await store.listMails(s.addressId, 10, 0)).results.map((m) => m.uuid), [recent.uuid], 'older than its 2 days: purged');
      assert.ok(await store.findSandbox('kept'));
      assert.equal(await store.deleteAddress(s.addressId), true);
      assert.equal(await store.findSandbox('kept'), undefined);
      assert.equal(await store.countSandboxes(), 0);
    },
  ],
];
