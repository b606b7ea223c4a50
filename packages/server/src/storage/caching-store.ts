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
import { passedThrough } from './store-pass-through.js';

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
    ...passedThrough(inner),
    // A sandbox's quota removes mail: a write like any other.
    trimMails: (addressId, maxMails, maxBytes) => writing([addressId], () => inner.trimMails(addressId, maxMails, maxBytes)),

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

    async deleteAddress(id, tombstone) {
      try {
        return await writing([id], () => inner.deleteAddress(id, tombstone));
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
    // A kept report summary is part of the parsed view: views built before it are not reused.
    keepReportSummary: (mails, summary, now) =>
      summary === null ? inner.keepReportSummary(mails, summary, now) : writing(new Set(mails.map((m) => m.addressId)), () => inner.keepReportSummary(mails, summary, now)),

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
