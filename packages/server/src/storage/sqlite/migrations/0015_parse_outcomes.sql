-- The degraded parsed view of a mail whose parse read only its header block (out of
-- its budget, or refused), so that such a mail is never parsed again for GET /parsed
-- (docs/decisions.md "Parsed mail"). Removed with the mail.
CREATE TABLE parse_outcomes (
  mail_id INTEGER PRIMARY KEY REFERENCES mails (id) ON DELETE CASCADE,
  view BLOB NOT NULL
);
