// The operators' blocks as SMTP checks them at MAIL FROM (docs/decisions.md "Blocks").
// The list lives in the database, so that every node honours every block: each node
// follows it (storage/followed-list.ts), reading the store's blocks version at most
// REFRESH_MS after the last read and the whole list only when it moved; a change made on
// this node reloads it at once (reload()), other nodes apply it within REFRESH_MS.
import ipaddr from 'ipaddr.js';
import type { Logger } from 'pino';
import { followList } from '../storage/followed-list.js';
import type { BlockKind, BlockRecord, OperatorStore } from '../storage/store.js';

/** How old the list may be when a check uses it: the longest a block made on another node takes to apply here. */
export const REFRESH_MS = 1000;

export interface BlockMatch {
  id: number;
  kind: BlockKind;
  value: string;
}

export interface BlockList {
  /** The block that refuses mail from this client address and envelope sender ('' for the null sender), if any. */
  match(ip: string, sender: string): Promise<BlockMatch | undefined>;
  /** Reads the list again (after a change made through this node); resolves once checks use it. */
  reload(): Promise<void>;
}

interface Compiled {
  senders: Map<string, BlockMatch>;
  domains: Map<string, BlockMatch>;
  ranges: { range: [ipaddr.IPv4 | ipaddr.IPv6, number]; block: BlockMatch }[];
}

const EMPTY: Compiled = { senders: new Map(), domains: new Map(), ranges: [] };

function compile(records: BlockRecord[]): Compiled {
  const compiled: Compiled = { senders: new Map(), domains: new Map(), ranges: [] };
  for (const r of records) {
    const block = { id: r.id, kind: r.kind, value: r.value };
    if (r.kind === 'sender') compiled.senders.set(r.value, block);
    else if (r.kind === 'domain') compiled.domains.set(r.value, block);
    else {
      const [address, bits] = r.value.split('/');
      const addr = ipaddr.parse(address!);
      compiled.ranges.push({ range: [addr, bits === undefined ? (addr.kind() === 'ipv4' ? 32 : 128) : Number(bits)], block });
    }
  }
  return compiled;
}

function clientAddress(ip: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  // IPv4 clients of a dual-stack listener arrive as ::ffff:a.b.c.d.
  return ipaddr.isValid(ip) ? ipaddr.process(ip) : undefined;
}

/**
 * `clock` measures the list's age: a monotonic clock by default, not the service's idea
 * of the time (which tests move by hand), so the refresh keeps its pace whatever that says.
 */
export function createBlockList(store: Pick<OperatorStore, 'blocksVersion' | 'listBlocks'>, opts: { logger?: Logger; clock?: () => number } = {}): BlockList {
  const list = followList({
    version: () => store.blocksVersion(),
    read: async () => compile(await store.listBlocks()),
    initial: EMPTY,
    refreshMs: REFRESH_MS,
    what: 'the blocks',
    logger: opts.logger,
    clock: opts.clock,
  });

  return {
    async match(ip, sender) {
      const { senders, domains, ranges } = await list.fresh();
      const addr = ranges.length > 0 ? clientAddress(ip) : undefined;
      if (addr) {
        for (const { range, block } of ranges) if (addr.kind() === range[0].kind() && addr.match(range)) return block;
      }
      if (!sender) return undefined;
      const lower = sender.toLowerCase();
      const exact = senders.get(lower);
      if (exact) return exact;
      // The sender's domain, then each parent: a block of spam.example covers mx.spam.example.
      let domain = lower.slice(lower.lastIndexOf('@') + 1);
      while (domain) {
        const block = domains.get(domain);
        if (block) return block;
        const dot = domain.indexOf('.');
        domain = dot < 0 ? '' : domain.slice(dot + 1);
      }
      return undefined;
    },
    reload: list.reload,
  };
}
