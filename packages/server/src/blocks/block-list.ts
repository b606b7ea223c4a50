// The operators' blocks as SMTP checks them at MAIL FROM (docs/decisions.md "Blocks").
// The list lives in the database, so that every node honours every block: each node
// keeps it in memory and, when it is older than REFRESH_MS, reads the store's blocks
// version (one small query) before the next check, and the whole list only when that
// version moved. A change made on this node reloads it at once (reload()), so the
// admin's answer comes after its own node applies the block; other nodes apply it
// within REFRESH_MS. Nothing here needs Redis, and no announcement can be missed.
import ipaddr from 'ipaddr.js';
import type { Logger } from 'pino';
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
  const now = opts.clock ?? (() => performance.now());
  let compiled = EMPTY;
  let version: string | undefined;
  let checkedAt = -Infinity;
  let failing = false;
  /** The load running now, and the one queued behind it (shared by every caller until it starts). */
  let running: Promise<void> | undefined;
  let queued: Promise<void> | undefined;

  async function load(): Promise<void> {
    try {
      const current = await store.blocksVersion();
      if (current !== version) {
        compiled = compile(await store.listBlocks());
        version = current;
      }
      if (failing) opts.logger?.info('blocks read again from the database');
      failing = false;
    } catch (err) {
      // The blocks already known stay in force; the next check after REFRESH_MS tries again.
      if (!failing) opts.logger?.warn({ err }, 'could not read the blocks from the database; using the last list read');
      failing = true;
    } finally {
      checkedAt = now();
    }
  }

  /** A load that starts after this call (so it sees every change committed before it). */
  function loadAfter(): Promise<void> {
    if (queued) return queued;
    const start = async () => {
      await running;
      queued = undefined;
      const mine = load();
      running = mine;
      await mine;
      if (running === mine) running = undefined;
    };
    queued = start();
    return queued;
  }

  async function fresh(): Promise<Compiled> {
    if (now() - checkedAt >= REFRESH_MS) await (running ?? loadAfter());
    return compiled;
  }

  return {
    async match(ip, sender) {
      const { senders, domains, ranges } = await fresh();
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
    reload: loadAfter,
  };
}
