-- Search reads only the address's own index entries (docs/decisions.md "Search"):
-- each word is indexed as z<address id>z<word> instead of next to one word naming the
-- address, and only live mail is in the index (a soft delete takes a mail out), so a
-- count needs no join. The words of 0006's index are read back with fts5vocab (the
-- index is contentless: there is no other copy of them) and written anew; this takes
-- about 4 minutes for 1,000,000 mails, once.
CREATE VIRTUAL TABLE temp.search_v6 USING fts5vocab(main, mail_search, instance);
CREATE VIRTUAL TABLE mail_search_v11 USING fts5(words, content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 2');
INSERT INTO mail_search_v11 (rowid, words)
  SELECT v.doc, group_concat('z' || m.address_id || 'z' || v.term, ' ')
  FROM temp.search_v6 v JOIN mails m ON m.id = v.doc
  WHERE m.deleted_at IS NULL AND v.term <> 'zzaddress' || m.address_id || 'zz'
  GROUP BY v.doc;
DROP TABLE temp.search_v6;
DROP TRIGGER mails_unindex;
DROP TABLE mail_search;
ALTER TABLE mail_search_v11 RENAME TO mail_search;
CREATE TRIGGER mails_unindex AFTER DELETE ON mails BEGIN
  DELETE FROM mail_search WHERE rowid = OLD.id;
END;
CREATE TRIGGER mails_unindex_deleted AFTER UPDATE OF deleted_at ON mails WHEN OLD.deleted_at IS NULL AND NEW.deleted_at IS NOT NULL BEGIN
  DELETE FROM mail_search WHERE rowid = NEW.id;
END;
