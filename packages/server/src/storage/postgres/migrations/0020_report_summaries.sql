-- The report summary of a mail (docs/api.md "Deliverability report"): each section's
-- verdict and the spam score, kept once its report was built (on arrival with
-- SPAM_SCANNER, or at its first report), going with the mail.
CREATE TABLE report_summaries (
  mail_id BIGINT PRIMARY KEY REFERENCES mails (id) ON DELETE CASCADE,
  summary TEXT NOT NULL
);
