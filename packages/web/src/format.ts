// Small helpers the views share: dates, senders, the clipboard.
import { metadataOf, type MailListItem } from './api.js';

/** Type of the `run` every view gets: runs an action, shows its error, tracks "busy". */
export type Run = (f: () => Promise<unknown>) => Promise<void>;

export function when(iso: string): string {
  const d = new Date(iso);
  const today = new Date();
  return d.toDateString() === today.toDateString() ? d.toLocaleTimeString() : d.toLocaleString();
}

export function sender(item: MailListItem): string {
  const from = metadataOf(item).from;
  return from.name || from.address || item.source || '(unknown sender)';
}

export function copy(text: string): void {
  void navigator.clipboard?.writeText(text).catch(() => undefined);
}
