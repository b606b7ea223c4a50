// What the public entry (index.ts) offers besides the service itself, for a program
// that prepares data for one: open its store to fill it before the service starts
// (fixtures, a benchmark's million mails), the metadata the service would store for
// a message (its codes and links among them), and a token for an address of a store
// filled that way. Each does exactly what the service does, through the same code.
import { join } from 'node:path';
import type { MailMetadata } from '@temp-inbox/api';
import { createTokens } from './domain/tokens.js';
import { buildMetadata, parseMessage } from './mail/parse/metadata.js';
import { SQLITE_FILE } from './storage/index.js';
import { openPostgresStore } from './storage/postgres/postgres-store.js';
import { openSqliteStore } from './storage/sqlite/sqlite-store.js';
import type { Store } from './storage/store.js';

export type { AddressRecord, MailBody, MailSummary, NewMail } from './storage/store.js';

/**
 * The part of a store a program may use to fill it: addresses, mails, and a list or
 * search to check what it holds. A mail's metadata is mailMetadata()'s answer as JSON.
 */
export type TempInboxStore = Pick<Store, 'kind' | 'createAddress' | 'findAddress' | 'insertMails' | 'listMails' | 'searchMails' | 'close'>;

/** Where the store is: the service's DATA_DIR (SQLite), or its DATABASE_URL and DATABASE_SCHEMA. */
export type StoreLocation = { dataDir: string } | { databaseUrl: string; databaseSchema?: string };

/**
 * Opens the store the service with this DATA_DIR or DATABASE_URL uses, creating and
 * migrating it as the service would. A SQLite file is best filled before the service
 * starts; PostgreSQL may be written while it runs.
 */
export async function openStore(location: StoreLocation): Promise<TempInboxStore> {
  if ('databaseUrl' in location) {
    return openPostgresStore(location.databaseUrl, location.databaseSchema === undefined ? {} : { schema: location.databaseSchema });
  }
  return openSqliteStore(join(location.dataDir, SQLITE_FILE));
}

/** The metadata the service stores and answers for this message (GET /api/mail/{uuid}): subject, people, codes, links. */
export async function mailMetadata(raw: Uint8Array): Promise<MailMetadata> {
  return buildMetadata(await parseMessage(raw), raw.length);
}

/** The JWT the service, run with this JWT_SECRET, accepts for the address (as POST /api/new_address answers it). */
export function signAddressToken(jwtSecret: string, address: { id: number; address: string }): Promise<string> {
  return createTokens(jwtSecret).sign({ address: address.address, addressId: address.id });
}
