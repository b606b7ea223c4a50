-- Whether the mail was marked read (PATCH /api/mail/{uuid}); mail stored before reads as unread.
ALTER TABLE mails ADD COLUMN seen INTEGER NOT NULL DEFAULT 0;
