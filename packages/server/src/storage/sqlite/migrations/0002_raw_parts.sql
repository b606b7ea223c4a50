-- A large message is stored in parts of RAW_PART_BYTES, so that storing it
-- never needs SQLite to copy the whole message at once (twice: bind and record).
ALTER TABLE mails ADD COLUMN raw_parts INTEGER NOT NULL DEFAULT 1;
CREATE TABLE mail_raw_parts (
  id INTEGER PRIMARY KEY,
  mail_id INTEGER NOT NULL REFERENCES mails (id) ON DELETE CASCADE,
  part INTEGER NOT NULL,
  data BLOB NOT NULL
);
CREATE UNIQUE INDEX mail_raw_parts_mail ON mail_raw_parts (mail_id, part);
