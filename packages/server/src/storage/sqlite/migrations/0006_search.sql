-- Full-text search (GET /api/mails/search). Contentless: the words, not a second
-- copy of the text; a row goes with its mail.
CREATE VIRTUAL TABLE mail_search USING fts5(words, content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 2');
CREATE TRIGGER mails_unindex AFTER DELETE ON mails BEGIN
  DELETE FROM mail_search WHERE rowid = OLD.id;
END;
