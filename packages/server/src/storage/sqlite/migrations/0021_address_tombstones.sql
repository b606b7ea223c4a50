-- Tombstones of deleted and expired addresses (docs/decisions.md "Deleted address"): the
-- keyed hash (HMAC-SHA256, hex) of the full address, never the address itself, and when
-- it was deleted. A name with a tombstone cannot be taken again (ADDRESS_TOMBSTONE_TTL).
CREATE TABLE address_tombstones (
  key TEXT PRIMARY KEY,
  deleted_at INTEGER NOT NULL
);
