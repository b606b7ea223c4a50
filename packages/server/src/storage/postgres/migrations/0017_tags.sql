-- Tags of mails (the Mailpit-compatible API), going with the mail.
CREATE TABLE mail_tags (
  mail_id BIGINT NOT NULL REFERENCES mails (id) ON DELETE CASCADE,
  address_id BIGINT NOT NULL,
  tag TEXT NOT NULL,
  PRIMARY KEY (mail_id, tag)
);
CREATE INDEX mail_tags_address_tag ON mail_tags (address_id, tag);
