// The operators' admin (docs/decisions.md "Admin"): addresses with their mail, the
// blocks SMTP refuses at MAIL FROM, and statistics. The admin routes call it; it works
// through the Store interface and the mail service, never a storage backend, and knows
// nothing of HTTP (its errors are domain errors).
import type { BlockList } from '../blocks/block-list.js';
import { normalizeBlockValue } from '../blocks/rules.js';
import { conflict, notFound } from '../domain/errors.js';
import type { RefusalCounts } from '../mail/refusal-counts.js';
import type { MailService } from '../mail/service.js';
import { createDomainStats, type DomainFigures } from './domain-stats.js';
import { readRefusals, type RefusalsData } from './refusals.js';
import { DAY_MS, type AddressOverview, type AddressRecord, type BlockKind, type BlockRecord, type MailRecord, type MailSummary, type StorageUsage, type Store } from '../storage/store.js';

/** Days of mails_per_day, today included. */
export const STATS_DAYS = 30;
export const TOP_SENDERS = 10;
/** Blocks in all: every node holds the list in memory and checks it at each MAIL FROM. */
export const MAX_BLOCKS = 10_000;

export interface AdminStatsData {
  /** STATS_DAYS entries, oldest first, today last: the UTC day as YYYY-MM-DD. */
  mailsPerDay: { day: string; mails: number }[];
  topSenders: { sender: string; mails: number }[];
  storage: StorageUsage;
}

/** The operators' admin (ADMIN_TOKEN): addresses, their mail, blocks and the node's numbers. */
export interface AdminService {
  /** Addresses containing `query` (case-insensitive), newest first. */
  listAddresses(query: string, limit: number, offset: number): Promise<{ results: AddressOverview[]; count: number }>;
  /** An address and its token, under the name policy every address is made under (docs/decisions.md "Admin"). */
  createAddress(req: { name?: string | undefined; domain?: string | undefined }): Promise<{ address: AddressRecord; jwt: string }>;
  /** Deletes the address with its mail (its token stops working, open streams end); the record it had. */
  deleteAddress(id: number): Promise<AddressRecord>;
  /**
   * Frees retired names (docs/decisions.md "Deleted address"): the tombstone of one address
   * (as typed: name@domain, case-insensitive), or every tombstone; how many were removed.
   */
  purgeTombstones(address?: string): Promise<number>;
  listMails(id: number, limit: number, offset: number): Promise<{ address: AddressRecord; page: { results: MailSummary[]; count: number } }>;
  getMail(id: number, uuid: string): Promise<MailRecord>;
  listBlocks(): Promise<BlockRecord[]>;
  /** Adds a block; it applies on this node before this resolves, on the others within a second (blocks/block-list.ts). */
  addBlock(req: { kind: BlockKind; value: string; note?: string | undefined }): Promise<BlockRecord>;
  removeBlock(id: number): Promise<void>;
  stats(): Promise<AdminStatsData>;
  /** Per domain: addresses, mails of the last day and of the last `days`, the share refused, the top sending domains (admin/domain-stats.ts). */
  domainStats(days: number): Promise<DomainFigures[]>;
  /** The SMTP refusals of the current hour and the `hours - 1` before it, by hour, reason and recipient domain (admin/refusals.ts). */
  refusals(hours: number): Promise<RefusalsData>;
}

export function createAdminService(opts: { store: Store; mail: MailService; blocks: BlockList; refusals?: RefusalCounts; now?: () => number }): AdminService {
  const { store, mail, blocks } = opts;
  const now = opts.now ?? Date.now;

  async function addressById(id: number): Promise<AddressRecord> {
    const address = await store.getAddress(id);
    if (!address) throw notFound('No such address.');
    return address;
  }

  return {
    // This node's refusal counts are written first, as for the refusals' own read.
    domainStats: createDomainStats(store, now, () => opts.refusals?.flush()),

    /** Addresses containing `query` (case-insensitive), newest first. */
    listAddresses(query: string, limit: number, offset: number): Promise<{ results: AddressOverview[]; count: number }> {
      return store.listAddresses(query.toLowerCase(), limit, Math.min(offset, Number.MAX_SAFE_INTEGER));
    },

    /** An address and its token, under the name policy every address is made under (docs/decisions.md "Admin"). */
    createAddress(req: { name?: string | undefined; domain?: string | undefined }): Promise<{ address: AddressRecord; jwt: string }> {
      return mail.createAddress(req);
    },

    /** Deletes the address with its mail (its token stops working, open streams end); the record it had. */
    async deleteAddress(id: number): Promise<AddressRecord> {
      const address = await addressById(id);
      if (!(await mail.deleteAddress(id))) throw notFound('No such address.');
      return address;
    },

    purgeTombstones(address?: string): Promise<number> {
      return mail.purgeTombstones(address?.trim().toLowerCase());
    },

    async listMails(id: number, limit: number, offset: number): Promise<{ address: AddressRecord; page: { results: MailSummary[]; count: number } }> {
      const address = await addressById(id);
      return { address, page: await mail.listMails(id, limit, offset) };
    },

    getMail(id: number, uuid: string): Promise<MailRecord> {
      return mail.getMail(id, uuid);
    },

    listBlocks(): Promise<BlockRecord[]> {
      return store.listBlocks();
    },

    /** Adds a block; it applies on this node before this resolves, on the others within a second (blocks/block-list.ts). */
    async addBlock(req: { kind: BlockKind; value: string; note?: string | undefined }): Promise<BlockRecord> {
      const value = normalizeBlockValue(req.kind, req.value);
      if ((await store.listBlocks()).length >= MAX_BLOCKS) throw conflict(`There are ${MAX_BLOCKS} blocks already; remove some first.`);
      const block = await store.addBlock({ kind: req.kind, value, note: (req.note ?? '').trim(), createdAt: now() });
      if (!block) throw conflict(`That ${req.kind} is blocked already.`);
      await blocks.reload();
      return block;
    },

    async removeBlock(id: number): Promise<void> {
      if (!(await store.deleteBlock(id))) throw notFound('No such block.');
      await blocks.reload();
    },

    async stats(): Promise<AdminStatsData> {
      const today = Math.floor(now() / DAY_MS);
      const first = today - STATS_DAYS + 1;
      const [counted, topSenders, storage] = await Promise.all([store.mailsPerDay(first), store.topSenders(first * DAY_MS, TOP_SENDERS), store.storageUsage()]);
      const byDay = new Map(counted.map((d) => [d.day, d.mails]));
      const mailsPerDay = Array.from({ length: STATS_DAYS }, (_, i) => ({
        day: new Date((first + i) * DAY_MS).toISOString().slice(0, 10),
        mails: byDay.get(first + i) ?? 0,
      }));
      return { mailsPerDay, topSenders, storage };
    },

    refusals: (hours: number) => readRefusals(store, opts.refusals, hours, now()),
  };
}
