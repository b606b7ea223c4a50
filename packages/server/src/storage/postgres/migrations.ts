// PostgreSQL schema versions, applied in order inside one transaction; the
// schema_migrations table records which ran. Mirrors sqlite/migrations.ts:
// identity ids (never reused), BIGINT millisecond timestamps, BYTEA raw mail,
// the same indexes and the same foreign-key actions.
export const MIGRATIONS: string[] = [
  `
  CREATE TABLE addresses (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    address TEXT NOT NULL UNIQUE,
    created_at BIGINT NOT NULL
  );
  CREATE INDEX addresses_created_at ON addresses (created_at);

  CREATE TABLE mails (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    uuid TEXT NOT NULL UNIQUE,
    address_id BIGINT NOT NULL REFERENCES addresses (id) ON DELETE CASCADE,
    address TEXT NOT NULL,
    source TEXT NOT NULL,
    message_id TEXT NOT NULL,
    metadata TEXT NOT NULL,
    raw BYTEA NOT NULL,
    created_at BIGINT NOT NULL,
    deleted_at BIGINT
  );
  CREATE INDEX mails_live_by_address ON mails (address_id, created_at DESC, id DESC) WHERE deleted_at IS NULL;
  -- For the ON DELETE CASCADE of an address (live and deleted mail alike).
  CREATE INDEX mails_address ON mails (address_id);
  CREATE INDEX mails_created_at ON mails (created_at);
  CREATE INDEX mails_deleted ON mails (deleted_at) WHERE deleted_at IS NOT NULL;

  CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    active_address_id BIGINT REFERENCES addresses (id) ON DELETE SET NULL,
    created_at BIGINT NOT NULL
  );
  CREATE INDEX sessions_created_at ON sessions (created_at);
  CREATE INDEX sessions_active_address ON sessions (active_address_id);

  CREATE TABLE session_addresses (
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE ON UPDATE CASCADE,
    address_id BIGINT NOT NULL REFERENCES addresses (id) ON DELETE CASCADE,
    added_at BIGINT NOT NULL,
    PRIMARY KEY (session_id, address_id)
  );
  CREATE INDEX session_addresses_address ON session_addresses (address_id);
  `,
  // v2: as SQLite's v4 — one stored body per message, shared by its recipients'
  // mails through a reference count kept by a trigger, with the decoded attachments.
  // The row lock of the UPDATE serialises two deletions of the last two references.
  `
  CREATE TABLE bodies (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    refs INTEGER NOT NULL,
    data BYTEA NOT NULL
  );
  CREATE TABLE body_attachments (
    body_id BIGINT NOT NULL REFERENCES bodies (id) ON DELETE CASCADE,
    idx INTEGER NOT NULL,
    content BYTEA NOT NULL,
    PRIMARY KEY (body_id, idx)
  );
  ALTER TABLE mails ADD COLUMN body_id BIGINT;
  ALTER TABLE mails ADD COLUMN size BIGINT NOT NULL DEFAULT 0;
  UPDATE mails SET size = octet_length(raw);
  CREATE FUNCTION release_mail_body() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    UPDATE bodies SET refs = refs - 1 WHERE id = OLD.body_id;
    DELETE FROM bodies WHERE id = OLD.body_id AND refs <= 0;
    RETURN NULL;
  END $$;
  CREATE TRIGGER mails_release_body AFTER DELETE ON mails FOR EACH ROW WHEN (OLD.body_id IS NOT NULL) EXECUTE FUNCTION release_mail_body();
  `,
  // v3: addresses a catch-all domain created on first mail, whose token nobody has taken yet.
  `
  ALTER TABLE addresses ADD COLUMN unclaimed BOOLEAN NOT NULL DEFAULT false;
  `,
  // v4: full-text search (GET /api/mails/search) over the words search-words.ts makes.
  `
  ALTER TABLE mails ADD COLUMN search tsvector;
  CREATE INDEX mails_search ON mails USING gin (search);
  `,
  // v5: as SQLite's v7 — the operators' admin: blocks refused at MAIL FROM with the
  // version every change moves, and mails counted per UTC day at delivery. Deliveries on several nodes commit at once, so the
  // count of a day is spread over 16 rows (shard = the delivery's first address id mod
  // 16): a delivery holds the lock of its row until it commits, and one row per day would
  // make every delivery wait for the one before it.
  `
  CREATE TABLE blocks (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind TEXT NOT NULL CHECK (kind IN ('sender', 'domain', 'ip')),
    value TEXT NOT NULL,
    note TEXT NOT NULL DEFAULT '',
    created_at BIGINT NOT NULL,
    UNIQUE (kind, value)
  );
  CREATE TABLE blocks_version (id INTEGER PRIMARY KEY CHECK (id = 1), version BIGINT NOT NULL);
  INSERT INTO blocks_version (id, version) VALUES (1, 0);
  CREATE FUNCTION bump_blocks_version() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    UPDATE blocks_version SET version = version + 1;
    RETURN NULL;
  END $$;
  CREATE TRIGGER blocks_changed AFTER INSERT OR DELETE ON blocks FOR EACH ROW EXECUTE FUNCTION bump_blocks_version();
  CREATE TABLE mail_days (
    day INTEGER NOT NULL,
    shard INTEGER NOT NULL,
    mails BIGINT NOT NULL,
    PRIMARY KEY (day, shard)
  );
  INSERT INTO mail_days (day, shard, mails) SELECT (created_at / 86400000)::integer, 0, count(*) FROM mails GROUP BY 1;
  `,
  // v6: as SQLite's v8 — whether the mail was marked read; mail stored before reads as unread.
  `
  ALTER TABLE mails ADD COLUMN seen BOOLEAN NOT NULL DEFAULT false;
  `,
  // v7: as SQLite's v9 — webhooks, their outbox (leased with FOR UPDATE SKIP LOCKED by
  // the node that sends a delivery) and the attempts (docs/decisions.md "Webhooks").
  `
  CREATE TABLE webhooks (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    address_id BIGINT NOT NULL UNIQUE REFERENCES addresses (id) ON DELETE CASCADE,
    url TEXT NOT NULL,
    secret TEXT NOT NULL,
    created_at BIGINT NOT NULL
  );
  CREATE TABLE webhook_outbox (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    webhook_id BIGINT REFERENCES webhooks (id) ON DELETE CASCADE,
    mail_id BIGINT NOT NULL REFERENCES mails (id) ON DELETE CASCADE,
    created_at BIGINT NOT NULL,
    next_at BIGINT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    lease_owner TEXT,
    lease_until BIGINT
  );
  CREATE INDEX webhook_outbox_due ON webhook_outbox (next_at);
  CREATE INDEX webhook_outbox_mail ON webhook_outbox (mail_id);
  CREATE INDEX webhook_outbox_webhook ON webhook_outbox (webhook_id);
  CREATE TABLE webhook_attempts (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    webhook_id BIGINT REFERENCES webhooks (id) ON DELETE CASCADE,
    address_id BIGINT NOT NULL REFERENCES addresses (id) ON DELETE CASCADE,
    mail_uuid TEXT NOT NULL,
    url TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    at BIGINT NOT NULL,
    outcome TEXT NOT NULL CHECK (outcome IN ('delivered', 'failed', 'gave_up')),
    status INTEGER,
    duration_ms INTEGER NOT NULL,
    error TEXT,
    next_at BIGINT
  );
  CREATE INDEX webhook_attempts_webhook ON webhook_attempts (webhook_id, id);
  CREATE INDEX webhook_attempts_address ON webhook_attempts (address_id);
  CREATE INDEX webhook_attempts_at ON webhook_attempts (at);
  `,
  // v8: as SQLite's v10 — passwords of addresses, for the mail.tm-compatible API.
  `
  CREATE TABLE address_passwords (
    address_id BIGINT PRIMARY KEY REFERENCES addresses (id) ON DELETE CASCADE,
    hash TEXT NOT NULL,
    updated_at BIGINT NOT NULL
  );
  `,
  // v9: as SQLite's v11 — search reads only the address's own index entries
  // (docs/decisions.md "Search"): each lexeme is z<address id>z<word>, so a common word
  // or prefix no longer walks every mail's entry in the GIN index. The tsvector is kept in
  // the row (STORAGE MAIN) rather than moved out to TOAST beside the metadata and raw
  // message: a search that counts 10,000 matches then reads 10,000 heap rows, not five
  // times as many pages. Lexemes of mail already stored are rewritten in place (and with
  // them the rows, so their tsvector comes back inline), with the GIN index dropped
  // meanwhile and built again after: once, and in proportion to the store.
  `
  DROP INDEX mails_search;
  ALTER TABLE mails ALTER COLUMN search SET STORAGE MAIN;
  UPDATE mails SET search = (SELECT array_to_tsvector(array_agg('z' || mails.address_id || 'z' || w)) FROM unnest(tsvector_to_array(search)) AS w)
    WHERE search IS NOT NULL AND search <> ''::tsvector;
  CREATE INDEX mails_search ON mails USING gin (search);
  `,
  // v10: as SQLite's v4 and v13 — a large message and a large decoded attachment are
  // stored in parts of 512 KiB (storage/parts.ts): bodies.data and body_attachments.content
  // hold the first part, the parts tables the rest: no value is copied whole into a
  // query's message (docs/decisions.md "A large message").
  `
  ALTER TABLE bodies ADD COLUMN parts INTEGER NOT NULL DEFAULT 1;
  CREATE TABLE body_parts (
    body_id BIGINT NOT NULL REFERENCES bodies (id) ON DELETE CASCADE,
    part INTEGER NOT NULL,
    data BYTEA NOT NULL,
    PRIMARY KEY (body_id, part)
  );
  ALTER TABLE body_attachments ADD COLUMN parts INTEGER NOT NULL DEFAULT 1;
  CREATE TABLE body_attachment_parts (
    body_id BIGINT NOT NULL,
    idx INTEGER NOT NULL,
    part INTEGER NOT NULL,
    data BYTEA NOT NULL,
    PRIMARY KEY (body_id, idx, part),
    FOREIGN KEY (body_id, idx) REFERENCES body_attachments (body_id, idx) ON DELETE CASCADE
  );
  `,
  // v11: as SQLite's v15 — the degraded parsed view of a mail whose parse read only its
  // header block, kept so that every node serves it without parsing the mail again.
  `
  CREATE TABLE parse_outcomes (
    mail_id BIGINT PRIMARY KEY REFERENCES mails (id) ON DELETE CASCADE,
    view BYTEA NOT NULL
  );
  `,
  // v12: as SQLite's v16 — sandboxes, each going with its address, and the envelope kept
  // on a sandbox's mail (NULL for every other mail).
  `
  CREATE TABLE sandboxes (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL,
    address_id BIGINT NOT NULL UNIQUE REFERENCES addresses (id) ON DELETE CASCADE,
    max_mails BIGINT NOT NULL,
    max_bytes BIGINT NOT NULL,
    retention_ms BIGINT NOT NULL,
    chaos TEXT NOT NULL DEFAULT '{}',
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
  );
  ALTER TABLE mails ADD COLUMN envelope TEXT;
  `,
  // v13: as SQLite's v17 — tags of mails (the Mailpit-compatible API), going with the mail.
  `
  CREATE TABLE mail_tags (
    mail_id BIGINT NOT NULL REFERENCES mails (id) ON DELETE CASCADE,
    address_id BIGINT NOT NULL,
    tag TEXT NOT NULL,
    PRIMARY KEY (mail_id, tag)
  );
  CREATE INDEX mail_tags_address_tag ON mail_tags (address_id, tag);
  `,
  // v14: as SQLite's v18 — webhooks take turns (served_at), one attempt in flight per
  // webhook across nodes (lease_owner, not_before, locked at the claim) and a hold after
  // attempts that timed out (not_before, timeouts).
  `
  ALTER TABLE webhooks ADD COLUMN served_at BIGINT NOT NULL DEFAULT 0;
  ALTER TABLE webhooks ADD COLUMN lease_owner TEXT;
  ALTER TABLE webhooks ADD COLUMN not_before BIGINT NOT NULL DEFAULT 0;
  ALTER TABLE webhooks ADD COLUMN timeouts INTEGER NOT NULL DEFAULT 0;
  UPDATE webhooks SET served_at = created_at;
  `,
];
