-- A message is stored once however many recipients it has (bodies, shared
-- through a reference count), with its decoded attachments, so a download never
-- parses the message again. mails.raw then holds only that recipient's
-- Received: line; mails.size is the whole message's size (the quota counts it).
-- No foreign key from mails.body_id: the trigger keeps the count, and a key would
-- make every body deletion look for referencing mails without an index.
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
