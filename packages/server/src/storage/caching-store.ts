// The caching store: a Store that wraps another and remembers address look-ups,
// and keeps the mail-set versions that let a response built from stored mail be
// reused. All cache and version bookkeeping lives here; the mail service only
// calls the Store (docs/decisions.md "One caching layer").
//
// Everything it remembers is tied to a version made of three parts:
// - the inner store's external write mark, which moves when another process
//   commits (undefined when the backend cannot tell: then nothing is remembered);
// - an epoch, moved by every purge (the retention sweep), which may touch any address;
// - a per-address counter moved by every write made through this store.
// A write bumps its counter even when it fails: a commit whose acknowledgement
// was lost may still have happened.
import { LRUCache } from 'lru-cache';
import type { AddressRecord, NewMail, PurgeResult, Store } from './store.js';

/** A Store that can also tell whether an address's live mail may have changed. */
export interface VersionedStore extends Store {
  /**
   * A token that changes whenever the live mail of this address may have changed
   * (delivery, deletion, clearing, purge, another process's write); undefined
   * when the store cannot tell, and then nothing built from its mail may be reused.
   */
  mailSetVersion(addressId: number): string | undefined;
}

export interface CachingStoreOptions {
  /** Address records remembered, by id and by name (each); default 10,000. */
  max?: number;
  /** An entry not read for this long is dropped; default 2 minutes. */
  idleMs?: number;
}

interface Remembered {
  record: AddressRecord;
  version: string;
}

export function createCachingStore(inner: Store, opts: CachingStoreOptions = {}): VersionedStore {
  const cacheOptions = {
    max: opts.max ?? 10_000,
    ttl: opts.idleMs ?? 2 * 60_000, // idle entries go; a polling client keeps its own
    updateAgeOnGet: true,
    ttlResolution: 1000, // a coarse clock is enough for an idle timeout (see domain/tokens.ts)
  };
  const byId = new LRUCache<number, Remembered>(cacheOptions);
  const byName = new LRUCache<string, Remembered>(cacheOptions);
  let sets = 0;

  let epoch = 0;
  /** Moved by every write to an address's mail (and by its deletion). */
  const mailVersions = new Map<number, number>();
  /** Moved only by an address's deletion: a delivery leaves its record valid. */
  const deletions = new Map<number, number>();
  let deletionsTotal = 0;

  const bump = (map: Map<number, number>, id: number) => map.set(id, (map.get(id) ?? 0) + 1);
  const versionOf = (map: Map<number, number>, id: number, mark = inner.externalWriteMark()) =>
    mark === undefined ? undefined : `${mark}.${epoch}.${map.get(id) ?? 0}`;

  // Idle entries are dropped now and then rather than by a timer per entry.
  function purgeIdleNowAndThen(): void {
    if (++sets % 1024 === 0) {
      byId.purgeStale();
      byName.purgeStale();
    }
  }

  /** Runs a write to the addresses' mail; their versions move whatever its outcome. */
  async function writing<T>(addressIds: Iterable<number>, write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } finally {
      for (const id of addressIds) bump(mailVersions, id);
    }
  }

  return {
    kind: inner.kind,
    // Passed through: nothing here changes an address or its mail.
    createAddress: (address, createdAt, opts) => inner.createAddress(address, createdAt, opts),
    // Claiming changes none of what is remembered (id, name, creation time).
    claimAddress: (address) => inner.claimAddress(address),
    listMails: (addressId, limit, offset) => inner.listMails(addressId, limit, offset),
    getMail: (addressId, uuid) => inner.getMail(addressId, uuid),
    openMail: (addressId, uuid) => inner.openMail(addressId, uuid),
    searchMails: (addressId, query, limit, offset) => inner.searchMails(addressId, query, limit, offset),
    getAttachment: (addressId, uuid, index) => inner.getAttachment(addressId, uuid, index),
    openAttachment: (addressId, uuid, index) => inner.openAttachment(addressId, uuid, index),
    addressUsage: (addressId) => inner.addressUsage(addressId),
    createSession: (id, createdAt) => inner.createSession(id, createdAt),
    getSession: (id) => inner.getSession(id),
    addSessionAddress: (sessionId, addressId, addedAt, max) => inner.addSessionAddress(sessionId, addressId, addedAt, max),
    listSessionAddresses: (sessionId) => inner.listSessionAddresses(sessionId),
    rotateSession: (oldId, newId, activeAddressId, renewedAt) => inner.rotateSession(oldId, newId, activeAddressId, renewedAt),
    deleteSession: (id) => inner.deleteSession(id),
    externalWriteMark: () => inner.externalWriteMark(),
    // The operators' admin: nothing here is remembered (an address deleted by the admin
    // goes through deleteAddress below). Blocks are cached by blocks/block-list.ts,
    // which follows blocksVersion across nodes.
    listAddresses: (contains, limit, offset) => inner.listAddresses(contains, limit, offset),
    addBlock: (block) => inner.addBlock(block),
    listBlocks: () => inner.listBlocks(),
    deleteBlock: (id) => inner.deleteBlock(id),
    blocksVersion: () => inner.blocksVersion(),
    mailsPerDay: (fromDay) => inner.mailsPerDay(fromDay),
    topSenders: (since, limit) => inner.topSenders(since, limit),
    storageUsage: () => inner.storageUsage(),
    // Passwords (the mail.tm-compatible API): read at each login, never remembered.
    setAddressPassword: (addressId, hash, at) => inner.setAddressPassword(addressId, hash, at),
    getAddressPassword: (addressId) => inner.getAddressPassword(addressId),
    // A mail's kept parse outcome: read from the store each time (it is small, and rare).
    getMailHead: (addressId, uuid) => inner.getMailHead(addressId, uuid),
    keepDegradedView: (mailId, view) => inner.keepDegradedView(mailId, view),
    // Sandboxes: read at each login and session, never remembered here (sandboxes/service.ts keeps
    // what it needs). Creating one creates its address, which nothing here has remembered missing.
    putSandbox: (input) => inner.putSandbox(input),
    getSandbox: (id) => inner.getSandbox(id),
    findSandbox: (name) => inner.findSandbox(name),
    listSandboxes: () => inner.listSandboxes(),
    countSandboxes: () => inner.countSandboxes(),
    setSandboxPassword: (id, hash, at) => inner.setSandboxPassword(id, hash, at),
    setSandboxChaos: (id, chaos, at) => inner.setSandboxChaos(id, chaos, at),
    trimMails: (addressId, maxMails, maxBytes) => writing([addressId], () => inner.trimMails(addressId, maxMails, maxBytes)),
    // Tags of mails (the Mailpit-compatible API): never remembered, and no response of our own API shows them.
    setMailTags: (addressId, uuids, tags) => inner.setMailTags(addressId, uuids, tags),
    mailTags: (addressId, mailIds) => inner.mailTags(addressId, mailIds),
    listTags: (addressId) => inner.listTags(addressId),
    renameTag: (addressId, from, to) => inner.renameTag(addressId, from, to),
    deleteTag: (addressId, tag) => inner.deleteTag(addressId, tag),
    // Webhooks and their outbox: nothing here is remembered, and none of it changes an
    // address or its live mail (a delivery reads a mail, deleted or not, by id).
    putWebhook: (addressId, url, secret, createdAt) => inner.putWebhook(addressId, url, secret, createdAt),
    getWebhook: (addressId) => inner.getWebhook(addressId),
    deleteWebhook: (addressId) => inner.deleteWebhook(addressId),
    claimDeliveries: (claim) => inner.claimDeliveries(claim),
    deliveriesQueued: () => inner.deliveriesQueued(),
    finishDelivery: (owner, deliveryId, attempt, release) => inner.finishDelivery(owner, deliveryId, attempt, release),
    nextDeliveryAt: (operator, after) => inner.nextDeliveryAt(operator, after),
    listWebhookAttempts: (addressId, limit) => inner.listWebhookAttempts(addressId, limit),
    pruneWebhooks: (cutoffs) => inner.pruneWebhooks(cutoffs),
    ping: () => inner.ping(),
    close: () => inner.close(),

    mailSetVersion: (addressId) => versionOf(mailVersions, addressId),

    async getAddress(id) {
      // Read before the look-up: a deletion that lands during it leaves the entry stale.
      const version = versionOf(deletions, id);
      const known = byId.get(id);
      if (known && version !== undefined && known.version === version) return known.record;
      byId.delete(id);
      const record = await inner.getAddress(id);
      if (record && version !== undefined) {
        byId.set(id, { record, version });
        purgeIdleNowAndThen();
      }
      return record;
    },

    async findAddress(address) {
      const known = byName.get(address);
      if (known && known.version === versionOf(deletions, known.record.id)) return known.record;
      byName.delete(address);
      // The record's id is known only after the look-up, so a deletion or sweep
      // anywhere during it leaves nothing remembered (a miss never is: an address
      // may appear at any time).
      const mark = inner.externalWriteMark();
      const startEpoch = epoch;
      const startDeletions = deletionsTotal;
      const record = await inner.findAddress(address);
      if (record && mark !== undefined && startEpoch === epoch && startDeletions === deletionsTotal) {
        byName.set(address, { record, version: versionOf(deletions, record.id, mark)! });
        purgeIdleNowAndThen();
      }
      return record;
    },

    async deleteAddress(id) {
      try {
        return await writing([id], () => inner.deleteAddress(id));
      } finally {
        bump(deletions, id);
        deletionsTotal++;
      }
    },

    insertMails: (mails: NewMail[]) => writing(new Set(mails.map((m) => m.addressId)), () => inner.insertMails(mails)),
    softDeleteMail: (addressId, uuid) => writing([addressId], () => inner.softDeleteMail(addressId, uuid)),
    // A change of the read flag is a change of the mail: lists and mails built before it are not reused.
    setSeen: (addressId, uuid, seen) => writing([addressId], () => inner.setSeen(addressId, uuid, seen)),
    clearMails: (addressId) => writing([addressId], () => inner.clearMails(addressId)),

    async purge(cutoffs): Promise<PurgeResult> {
      try {
        return await inner.purge(cutoffs);
      } finally {
        // A new epoch invalidates every version, so the counters can start again.
        mailVersions.clear();
        deletions.clear();
        epoch++;
      }
    },
  };
}
