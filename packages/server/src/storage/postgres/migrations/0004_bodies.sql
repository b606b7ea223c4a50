-- One stored body per message, shared by its recipients'
-- mails through a reference count kept by a trigger, with the decoded attachments.
-- The row lock of the UPDATE serialises two deletions of the last two references.
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
