-- Sandboxes (docs/decisions.md "Sandboxes"): an SMTP login whose mail lives in an
-- address of its own (<name>@sandbox.invalid), going with that address; and the envelope
-- (JSON: from, to) kept on a sandbox's mail, NULL for every other mail.
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
