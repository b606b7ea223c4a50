// Schema versions, applied in order; PRAGMA user_version records how many ran.
export const MIGRATIONS: string[] = [
  `
  CREATE TABLE addresses (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    address TEXT NOT NULL UNIQUE,
    created_at INTEGER NOT NULL
  );
  CREATE INDEX addresses_created_at ON addresses (created_at);

  CREATE TABLE mails (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    uuid TEXT NOT NULL UNIQUE,
    address_id INTEGER NOT NULL REFERENCES addresses (id) ON DELETE CASCADE,
    address TEXT NOT NULL,
    source TEXT NOT NULL,
    message_id TEXT NOT NULL,
    metadata TEXT NOT NULL,
    raw BLOB NOT NULL,
    created_at INTEGER NOT NULL,
    deleted_at INTEGER
  );
  CREATE INDEX mails_live_by_address ON mails (address_id, created_at DESC, id DESC) WHERE deleted_at IS NULL;
  -- For the ON DELETE CASCADE of an address (live and deleted mail alike).
  CREATE INDEX mails_address ON mails (address_id);
  CREATE INDEX mails_created_at ON mails (created_at);
  CREATE INDEX mails_deleted ON mails (deleted_at) WHERE deleted_at IS NOT NULL;

  CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    active_address_id INTEGER REFERENCES addresses (id) ON DELETE SET NULL,
    created_at INTEGER NOT NULL
  );
  CREATE INDEX sessions_created_at ON sessions (created_at);
  CREATE INDEX sessions_active_address ON sessions (active_address_id);

  CREATE TABLE session_addresses (
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE ON UPDATE CASCADE,
    address_id INTEGER NOT NULL REFERENCES addresses (id) ON DELETE CASCADE,
    added_at INTEGER NOT NULL,
    PRIMARY KEY (session_id, address_id)
  );
  CREATE INDEX session_addresses_address ON session_addresses (address_id);
  `,
  // v2: a large message is stored in parts of RAW_PART_BYTES, so that storing it
  // never needs SQLite to copy the whole message at once (twice: bind and record).
  `
  ALTER TABLE mails ADD COLUMN raw_parts INTEGER NOT NULL DEFAULT 1;
  CREATE TABLE mail_raw_parts (
    id INTEGER PRIMARY KEY,
    mail_id INTEGER NOT NULL REFERENCES mails (id) ON DELETE CASCADE,
    part INTEGER NOT NULL,
    data BLOB NOT NULL
  );
  CREATE UNIQUE INDEX mail_raw_parts_mail ON mail_raw_parts (mail_id, part);
  `,
  // v3: one index per address instead of two. (address_id, deleted_at, ...) serves
  // the live list and count (deleted_at IS NULL is an equality for the index) and
  // the cascade of an address deletion; each stored mail updates one index fewer.
  `
  CREATE INDEX mails_by_address ON mails (address_id, deleted_at, created_at DESC, id DESC);
  DROP INDEX mails_live_by_address;
  DROP INDEX mails_address;
  `,
  // v4: a message is stored once however many recipients it has (bodies, shared
  // through a reference count), with its decoded attachments, so a download never
  // parses the message again. mails.raw then holds only that recipient's
  // Received: line; mails.size is the whole message's size (the quota counts it).
  // No foreign key from mails.body_id: the trigger keeps the count, and a key would
  // make every body deletion look for referencing mails without an index.
  `
  CREATE TABLE bodies (
    id INTEGER PRIMARY KEY,
    refs INTEGER NOT NULL,
    parts INTEGER NOT NULL,
    data BLOB NOT NULL
  );
  CREATE TABLE body_parts (
    id INTEGER PRIMARY KEY,
    body_id INTEGER NOT NULL REFERENCES bodies (id) ON DELETE CASCADE,
    part INTEGER NOT NULL,
    data BLOB NOT NULL
  );
  CREATE UNIQUE INDEX body_parts_body ON body_parts (body_id, part);
  CREATE TABLE body_attachments (
    id INTEGER PRIMARY KEY,
    body_id INTEGER NOT NULL REFERENCES bodies (id) ON DELETE CASCADE,
    idx INTEGER NOT NULL,
    content BLOB NOT NULL
  );
  CREATE UNIQUE INDEX body_attachments_body ON body_attachments (body_id, idx);
  ALTER TABLE mails ADD COLUMN body_id INTEGER;
  ALTER TABLE mails ADD COLUMN size INTEGER NOT NULL DEFAULT 0;
  UPDATE mails SET size = length(raw) WHERE raw_parts = 1;
  CREATE TRIGGER mails_release_body AFTER DELETE ON mails WHEN OLD.body_id IS NOT NULL BEGIN
    UPDATE bodies SET refs = refs - 1 WHERE id = OLD.body_id;
    DELETE FROM bodies WHERE id = OLD.body_id AND refs <= 0;
  END;
  `,
  // v5: addresses a catch-all domain created on first mail, whose token nobody has taken yet.
  `
  ALTER TABLE addresses ADD COLUMN unclaimed INTEGER NOT NULL DEFAULT 0;
  `,
  // v6: full-text search (GET /api/mails/search). Contentless: the words, not a second
  // copy of the text; a row goes with its mail.
  `
  CREATE VIRTUAL TABLE mail_search USING fts5(words, content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 2');
  CREATE TRIGGER mails_unindex AFTER DELETE ON mails BEGIN
    DELETE FROM mail_search WHERE rowid = OLD.id;
  END;
  `,
  // v7: the operators' admin (docs/decisions.md "Admin", "Blocks"). Blocks refused at
  // MAIL FROM (AUTOINCREMENT: an id never names another block later) with a version
  // every change moves, which each node reads before it reloads the list; and mails
  // counted per UTC day at delivery, so that the statistics outlive MAIL_TTL, started
  // from the mail stored now. shard is always 0 here (see the PostgreSQL v5).
  `
  CREATE TABLE blocks (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL CHECK (kind IN ('sender', 'domain', 'ip')),
    value TEXT NOT NULL,
    note TEXT NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL,
    UNIQUE (kind, value)
  );
  CREATE TABLE blocks_version (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL);
  INSERT INTO blocks_version (id, version) VALUES (1, 0);
  CREATE TRIGGER blocks_added AFTER INSERT ON blocks BEGIN
    UPDATE blocks_version SET version = version + 1;
  END;
  CREATE TRIGGER blocks_removed AFTER DELETE ON blocks BEGIN
    UPDATE blocks_version SET version = version + 1;
  END;
  CREATE TABLE mail_days (
    day INTEGER NOT NULL,
    shard INTEGER NOT NULL,
    mails INTEGER NOT NULL,
    PRIMARY KEY (day, shard)
  ) WITHOUT ROWID;
  INSERT INTO mail_days (day, shard, mails) SELECT created_at / 86400000, 0, count(*) FROM mails GROUP BY created_at / 86400000;
  `,
  // v8: whether the mail was marked read (PATCH /api/mail/{uuid}); mail stored before reads as unread.
  `
  ALTER TABLE mails ADD COLUMN seen INTEGER NOT NULL DEFAULT 0;
  `,
  // v9: webhooks (docs/decisions.md "Webhooks"): one per address; the outbox of deliveries,
  // queued in the mail's own transaction (webhook_id NULL: the operator's WEBHOOK_URL) and
  // leased by the node that sends them; the attempts GET /api/webhook/deliveries lists.
  // Deliveries go with their mail or webhook, attempts with their webhook or address.
  `
  CREATE TABLE webhooks (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    address_id INTEGER NOT NULL UNIQUE REFERENCES addresses (id) ON DELETE CASCADE,
    url TEXT NOT NULL,
    secret TEXT NOT NULL,
    created_at INTEGER NOT NULL
  );
  CREATE TABLE webhook_outbox (
    id INTEGER PRIMARY KEY,
    webhook_id INTEGER REFERENCES webhooks (id) ON DELETE CASCADE,
    mail_id INTEGER NOT NULL REFERENCES mails (id) ON DELETE CASCADE,
    created_at INTEGER NOT NULL,
    next_at INTEGER NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    lease_owner TEXT,
    lease_until INTEGER
  );
  CREATE INDEX webhook_outbox_due ON webhook_outbox (next_at);
  CREATE INDEX webhook_outbox_mail ON webhook_outbox (mail_id);
  CREATE INDEX webhook_outbox_webhook ON webhook_outbox (webhook_id);
  CREATE TABLE webhook_attempts (
    id INTEGER PRIMARY KEY,
    webhook_id INTEGER REFERENCES webhooks (id) ON DELETE CASCADE,
    address_id INTEGER NOT NULL REFERENCES addresses (id) ON DELETE CASCADE,
    mail_uuid TEXT NOT NULL,
    url TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    at INTEGER NOT NULL,
    outcome TEXT NOT NULL CHECK (outcome IN ('delivered', 'failed', 'gave_up')),
    status INTEGER,
    duration_ms INTEGER NOT NULL,
    error TEXT,
    next_at INTEGER
  );
  CREATE INDEX webhook_attempts_webhook ON webhook_attempts (webhook_id, id);
  CREATE INDEX webhook_attempts_address ON webhook_attempts (address_id);
  CREATE INDEX webhook_attempts_at ON webhook_attempts (at);
  `,
  // v10: passwords of addresses, for the mail.tm-compatible API (docs/decisions.md
  // "mail.tm accounts"); a row goes with its address.
  `
  CREATE TABLE address_passwords (
    address_id INTEGER PRIMARY KEY REFERENCES addresses (id) ON DELETE CASCADE,
    hash TEXT NOT NULL,
    updated_at INTEGER NOT NULL
  ) WITHOUT ROWID;
  `,
  // v11: search reads only the address's own index entries (docs/decisions.md "Search"):
  // each word is indexed as z<address id>z<word> instead of next to one word naming the
  // address, and only live mail is in the index (a soft delete takes a mail out), so a
  // count needs no join. The words of v6's index are read back with fts5vocab (the
  // index is contentless: there is no other copy of them) and written anew; this takes
  // about 4 minutes for 1,000,000 mails, once.
  `
  CREATE VIRTUAL TABLE temp.search_v6 USING fts5vocab(main, mail_search, instance);
  CREATE VIRTUAL TABLE mail_search_v11 USING fts5(words, content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 2');
  INSERT INTO mail_search_v11 (rowid, words)
    SELECT v.doc, group_concat('z' || m.address_id || 'z' || v.term, ' ')
    FROM temp.search_v6 v JOIN mails m ON m.id = v.doc
    WHERE m.deleted_at IS NULL AND v.term <> 'zzaddress' || m.address_id || 'zz'
    GROUP BY v.doc;
  DROP TABLE temp.search_v6;
  DROP TRIGGER mails_unindex;
  DROP TABLE mail_search;
  ALTER TABLE mail_search_v11 RENAME TO mail_search;
  CREATE TRIGGER mails_unindex AFTER DELETE ON mails BEGIN
    DELETE FROM mail_search WHERE rowid = OLD.id;
  END;
  CREATE TRIGGER mails_unindex_deleted AFTER UPDATE OF deleted_at ON mails WHEN OLD.deleted_at IS NULL AND NEW.deleted_at IS NOT NULL BEGIN
    DELETE FROM mail_search WHERE rowid = NEW.id;
  END;
  `,
  // v12: the checkpointing thread's first commit of each new WAL (checkpoint-worker.ts),
  // so the sync of the WAL's header is not made on the event loop (docs/decisions.md
  // "Durability"). One row, counting the restarts.
  `
  CREATE TABLE wal_restarts (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    count INTEGER NOT NULL
  );
  `,
  // v13: a large decoded attachment is stored in parts of RAW_PART_BYTES, as the message
  // itself is (v4): bound whole, SQLite held two more copies of it while it stored the row
  // (docs/benchmarks-journal.md "Memory of one large message"). body_attachments.content holds
  // the first part.
  `
  ALTER TABLE body_attachments ADD COLUMN parts INTEGER NOT NULL DEFAULT 1;
  CREATE TABLE body_attachment_parts (
    id INTEGER PRIMARY KEY,
    attachment_id INTEGER NOT NULL REFERENCES body_attachments (id) ON DELETE CASCADE,
    part INTEGER NOT NULL,
    data BLOB NOT NULL
  );
  CREATE UNIQUE INDEX body_attachment_parts_attachment ON body_attachment_parts (attachment_id, part);
  `,
  // v14: a delivery queues its mail's words here and the index (mail_search) is written
  // in batches afterwards (search-queue.ts, docs/decisions.md "Search"). A mail deleted
  // or soft-deleted while queued leaves the queue too, so it is never indexed.
  `
  CREATE TABLE search_pending (
    mail_id INTEGER PRIMARY KEY,
    address_id INTEGER NOT NULL,
    words TEXT NOT NULL
  );
  DROP TRIGGER mails_unindex;
  DROP TRIGGER mails_unindex_deleted;
  CREATE TRIGGER mails_unindex AFTER DELETE ON mails BEGIN
    DELETE FROM mail_search WHERE rowid = OLD.id;
    DELETE FROM search_pending WHERE mail_id = OLD.id;
  END;
  CREATE TRIGGER mails_unindex_deleted AFTER UPDATE OF deleted_at ON mails WHEN OLD.deleted_at IS NULL AND NEW.deleted_at IS NOT NULL BEGIN
    DELETE FROM mail_search WHERE rowid = NEW.id;
    DELETE FROM search_pending WHERE mail_id = NEW.id;
  END;
  `,
  // v15: the degraded parsed view of a mail whose parse read only its header block (out of
  // its budget, or refused), so that such a mail is never parsed again for GET /parsed
  // (docs/decisions.md "Parsed mail"). Removed with the mail.
  `
  CREATE TABLE parse_outcomes (
    mail_id INTEGER PRIMARY KEY REFERENCES mails (id) ON DELETE CASCADE,
    view BLOB NOT NULL
  );
  `,
  // v16: sandboxes (docs/decisions.md "Sandboxes"): an SMTP login whose mail lives in an
  // address of its own (<name>@sandbox.invalid), going with that address; and the envelope
  // (JSON: from, to) kept on a sandbox's mail, NULL for every other mail.
  `
  CREATE TABLE sandboxes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL,
    address_id INTEGER NOT NULL UNIQUE REFERENCES addresses (id) ON DELETE CASCADE,
    max_mails INTEGER NOT NULL,
    max_bytes INTEGER NOT NULL,
    retention_ms INTEGER NOT NULL,
    chaos TEXT NOT NULL DEFAULT '{}',
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  );
  ALTER TABLE mails ADD COLUMN envelope TEXT;
  `,
  // v17: tags of mails (the Mailpit-compatible API's PUT /api/v1/tags), a row per mail and
  // tag, going with the mail; looked up by address and tag.
  `
  CREATE TABLE mail_tags (
    mail_id INTEGER NOT NULL REFERENCES mails (id) ON DELETE CASCADE,
    address_id INTEGER NOT NULL,
    tag TEXT NOT NULL,
    PRIMARY KEY (mail_id, tag)
  ) WITHOUT ROWID;
  CREATE INDEX mail_tags_address_tag ON mail_tags (address_id, tag);
  `,
  // v18: webhooks take turns and hold back (docs/decisions.md "Webhooks"): served_at, when
  // its latest attempt was claimed (the webhook served longest ago goes first);
  // lease_owner and not_before, the node whose attempt to it is in flight and the time
  // before which no other starts (that attempt's lease end, or the end of a hold after
  // attempts that timed out); timeouts, its attempts in a row that timed out.
  `
  ALTER TABLE webhooks ADD COLUMN served_at INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE webhooks ADD COLUMN lease_owner TEXT;
  ALTER TABLE webhooks ADD COLUMN not_before INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE webhooks ADD COLUMN timeouts INTEGER NOT NULL DEFAULT 0;
  UPDATE webhooks SET served_at = created_at;
  `,
];
