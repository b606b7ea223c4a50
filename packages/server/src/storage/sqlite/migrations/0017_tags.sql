-- Tags of mails (the Mailpit-compatible API's PUT /api/v1/tags), a row per mail and
-- tag, going with the mail; looked up by address and tag.
CREATE TABLE mail_tags (
  mail_id INTEGER NOT NULL REFERENCES mails (id) ON DELETE CASCADE,
  address_id INTEGER NOT NULL,
  tag TEXT NOT NULL,
  PRIMARY KEY (mail_id, tag)
) WITHOUT ROWID;
CREATE INDEX mail_tags_address_tag ON mail_tags (address_id, tag);
