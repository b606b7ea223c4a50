-- The degraded parsed view of a mail whose parse read only its
-- header block, kept so that every node serves it without parsing the mail again.
CREATE TABLE parse_outcomes (
  mail_id BIGINT PRIMARY KEY REFERENCES mails (id) ON DELETE CASCADE,
  view BYTEA NOT NULL
);
