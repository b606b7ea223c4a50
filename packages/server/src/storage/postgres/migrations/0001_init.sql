-- The first schema: addresses, their mails and the sessions that hold addresses.
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
