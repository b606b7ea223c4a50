-- Whether the mail was marked read; mail stored before reads as unread.
ALTER TABLE mails ADD COLUMN seen BOOLEAN NOT NULL DEFAULT false;
