-- One index per address instead of two. (address_id, deleted_at, ...) serves
-- the live list and count (deleted_at IS NULL is an equality for the index) and
-- the cascade of an address deletion; each stored mail updates one index fewer.
CREATE INDEX mails_by_address ON mails (address_id, deleted_at, created_at DESC, id DESC);
DROP INDEX mails_live_by_address;
DROP INDEX mails_address;
