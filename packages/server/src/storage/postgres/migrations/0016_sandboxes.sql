-- Sandboxes, each going with its address, and the envelope kept
-- on a sandbox's mail (NULL for every other mail).
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
