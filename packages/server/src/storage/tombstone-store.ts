// Tombstones of deleted and expired addresses (a role of Store, store.ts; docs/decisions.md
// "Deleted address"): a name once given out is not given out again, so its next holder never
// receives the mail (password resets, sign-in links) meant for the previous one. A tombstone
// holds a keyed hash of the full address (domain/tombstones.ts), never the address itself.

/** What deleteAddress and purge are given to leave tombstones. */
export interface TombstoneMark {
  /** The keyed hash of an address (domain/tombstones.ts). */
  keyOf: (address: string) => string;
  /** When the address was deleted (ms since the epoch). */
  at: number;
}

/** What createAddress is given to refuse a name with a tombstone. */
export interface TombstoneCheck {
  /** The keyed hash of the address asked for. */
  key: string;
  /** Tombstones older than this no longer hold the name (Number.MIN_SAFE_INTEGER: none expires). */
  since: number;
}

export interface TombstoneStore {
  /** Whether a tombstone of `key` left at or after `since` holds the name. */
  hasTombstone(key: string, since: number): Promise<boolean>;
  /**
   * Removes tombstones (the operators' purge, docs/api.md "Admin"): the one of `key` when
   * given, else every one left before `before` (undefined: all). Returns how many went.
   */
  purgeTombstones(opts: { key?: string; before?: number }): Promise<number>;
}
