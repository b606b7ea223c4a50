-- The checkpointing thread's first commit of each new WAL (checkpoint-worker.ts),
-- so the sync of the WAL's header is not made on the event loop (docs/decisions.md
-- "Durability"). One row, counting the restarts.
CREATE TABLE wal_restarts (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  count INTEGER NOT NULL
);
