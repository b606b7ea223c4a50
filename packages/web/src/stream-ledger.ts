// What the event stream changed in the mail list, so that a page of the list fetched
// meanwhile does not undo it. A page is the server's list as it was when the page was
// asked for; the stream's events can arrive before the page's answer does (the first
// load, a poll while the stream is down, the catch-up when the stream opens). A mail the
// stream added after the page was asked for stays at the head, one it deleted or cleared
// stays gone, and a read mark it changed stays as it is.
import type { MailListItem } from './api.js';

/** Where a fetch started in the stream's events (StreamLedger.begin). */
export type LedgerMark = number;

export class StreamLedger {
  private seq = 0;
  private readonly added = new Map<string, number>();
  private readonly removed = new Map<string, number>();
  /** When the stream last marked each mail read or unread, and to what (`seenAs`). */
  private readonly seenAt = new Map<string, number>();
  private readonly seenAs = new Map<string, boolean>();
  private clearedAt = 0;
  /** Fetches under way, by their marks: what the stream did before the oldest is forgotten. */
  private readonly open = new Map<LedgerMark, number>();

  /** A fetch of the list's head starts now. */
  begin(): LedgerMark {
    this.open.set(this.seq, (this.open.get(this.seq) ?? 0) + 1);
    return this.seq;
  }

  add(uuid: string): void {
    this.added.set(uuid, ++this.seq);
  }

  remove(uuid: string): void {
    this.removed.set(uuid, ++this.seq);
  }

  markSeen(uuid: string, seen: boolean): void {
    this.seenAt.set(uuid, ++this.seq);
    this.seenAs.set(uuid, seen);
  }

  clear(): void {
    this.clearedAt = ++this.seq;
  }

  /**
   * The list with `page` (the newest mail, fetched since `mark`) as its head: mail the
   * stream added since the mark stays in front, and what it deleted, cleared or marked
   * since is applied to the page; pages further down ("More") are kept. `count` is the
   * page's count with the mail kept in front added.
   */
  head(list: MailListItem[], page: MailListItem[], count: number, pageSize: number, mark: LedgerMark): { list: MailListItem[]; count: number } {
    const after = (at: number | undefined) => at !== undefined && at > mark;
    const cleared = this.clearedAt > mark;
    const fresh = page
      .filter((m) => !cleared && !after(this.removed.get(m.uuid)))
      .map((m) => {
        const seen = this.seenAs.get(m.uuid);
        return seen !== undefined && after(this.seenAt.get(m.uuid)) && seen !== m.seen ? { ...m, seen } : m;
      });
    const inPage = new Set(fresh.map((m) => m.uuid));
    const newer = list.filter((m) => !inPage.has(m.uuid) && after(this.added.get(m.uuid)));
    const kept = new Set(newer.map((m) => m.uuid));
    const rest = cleared ? [] : list.slice(pageSize).filter((m) => !inPage.has(m.uuid) && !kept.has(m.uuid));
    this.end(mark);
    return { list: [...newer, ...fresh, ...rest], count: (cleared ? 0 : count - (page.length - fresh.length)) + newer.length };
  }

  /** A fetch that ended without an answer. */
  end(mark: LedgerMark): void {
    const n = this.open.get(mark) ?? 0;
    if (n > 1) this.open.set(mark, n - 1);
    else this.open.delete(mark);
    this.forget();
  }

  /** Drops what no fetch under way can need. */
  private forget(): void {
    const oldest = this.open.size ? Math.min(...this.open.keys()) : this.seq;
    for (const map of [this.added, this.removed, this.seenAt]) {
      for (const [uuid, at] of map) if (at <= oldest) map.delete(uuid);
    }
    for (const uuid of this.seenAs.keys()) if (!this.seenAt.has(uuid)) this.seenAs.delete(uuid);
  }
}
