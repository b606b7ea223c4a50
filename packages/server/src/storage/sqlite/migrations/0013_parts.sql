-- A large decoded attachment is stored in parts of RAW_PART_BYTES, as the message
-- itself is (0004): bound whole, SQLite held two more copies of it while it stored the row
-- (docs/benchmarks-journal.md "Memory of one large message"). body_attachments.content holds
-- the first part.
ALTER TABLE body_attachments ADD COLUMN parts INTEGER NOT NULL DEFAULT 1;
CREATE TABLE body_attachment_parts (
  id INTEGER PRIMARY KEY,
  attachment_id INTEGER NOT NULL REFERENCES body_attachments (id) ON DELETE CASCADE,
  part INTEGER NOT NULL,
  data BLOB NOT NULL
);
CREATE UNIQUE INDEX body_attachment_parts_attachment ON body_attachment_parts (attachment_id, part);
