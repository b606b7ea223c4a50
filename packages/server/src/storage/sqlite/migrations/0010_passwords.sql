-- Passwords of addresses, for the mail.tm-compatible API (docs/decisions.md
-- "mail.tm accounts"); a row goes with its address.
CREATE TABLE address_passwords (
  address_id INTEGER PRIMARY KEY REFERENCES addresses (id) ON DELETE CASCADE,
  hash TEXT NOT NULL,
  updated_at INTEGER NOT NULL
) WITHOUT ROWID;
