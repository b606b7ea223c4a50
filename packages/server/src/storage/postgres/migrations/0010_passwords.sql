-- Passwords of addresses, for the mail.tm-compatible API.
CREATE TABLE address_passwords (
  address_id BIGINT PRIMARY KEY REFERENCES addresses (id) ON DELETE CASCADE,
  hash TEXT NOT NULL,
  updated_at BIGINT NOT NULL
);
