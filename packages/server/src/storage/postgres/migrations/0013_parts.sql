-- A large message and a large decoded attachment are stored in parts of 512 KiB (here
-- with the body parts SQLite has had since 0004_bodies.sql; storage/parts.ts): bodies.data and body_attachments.content
-- hold the first part, the parts tables the rest: no value is copied whole into a
-- query's message (docs/decisions.md "A large message").
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
