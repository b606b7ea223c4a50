-- Full-text search (GET /api/mails/search) over the words search-words.ts makes.
ALTER TABLE mails ADD COLUMN search tsvector;
CREATE INDEX mails_search ON mails USING gin (search);
