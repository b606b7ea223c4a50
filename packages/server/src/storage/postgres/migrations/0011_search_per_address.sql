-- Search reads only the address's own index entries
-- (docs/decisions.md "Search"): each lexeme is z<address id>z<word>, so a common word
-- or prefix no longer walks every mail's entry in the GIN index. The tsvector is kept in
-- the row (STORAGE MAIN) rather than moved out to TOAST beside the metadata and raw
-- message: a search that counts 10,000 matches then reads 10,000 heap rows, not five
-- times as many pages. Lexemes of mail already stored are rewritten in place (and with
-- them the rows, so their tsvector comes back inline), with the GIN index dropped
-- meanwhile and built again after: once, and in proportion to the store.
DROP INDEX mails_search;
ALTER TABLE mails ALTER COLUMN search SET STORAGE MAIN;
UPDATE mails SET search = (SELECT array_to_tsvector(array_agg('z' || mails.address_id || 'z' || w)) FROM unnest(tsvector_to_array(search)) AS w)
  WHERE search IS NOT NULL AND search <> ''::tsvector;
CREATE INDEX mails_search ON mails USING gin (search);
