// Small helpers the views share: senders, and the type of `run` (dates and numbers: intl.ts).
import { metadataOf, type MailListItem } from './api.js';
import { s } from './strings.js';

/** Type of the `run` every view gets: runs an action, shows its error, tracks "busy". */
export type Run = (f: () => Promise<unknown>) => Promise<void>;

export function sender(item: MailListItem): string {
  const from = metadataOf(item).from;
  return from.name || from.address || item.source || s.unknownSender;
}
