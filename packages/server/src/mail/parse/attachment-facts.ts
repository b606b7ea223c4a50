// What the attachment policy (mail/attachment-policy.ts) needs to know of a message's
// attachments, gathered in the parse worker from every attachment the parser found (listed
// in the metadata or not): the largest one's size, the file name extensions, and whether one
// begins as an executable does. Bounded whatever the message: a look at each part's name and
// first four bytes, and at most MAX_EXTENSIONS distinct extensions kept.

export interface AttachmentFacts {
  /** Attachments in all. */
  count: number;
  /** The largest one's decoded size in bytes, and its file name. */
  largest: { bytes: number; filename: string };
  /** Distinct lower-cased extensions (without the dot), each with the first file name that had it. */
  extensions: { ext: string; filename: string }[];
  /** More than MAX_EXTENSIONS distinct extensions: the rest are not listed. */
  extensionsCut: boolean;
  /** The first attachment whose decoded bytes begin as a Windows (PE, "MZ") or an ELF executable does. */
  executable: { kind: 'pe' | 'elf'; filename: string } | undefined;
}

export const MAX_EXTENSIONS = 64;
/** Longest extension looked at (longer ones are kept, cut): no refused type is longer. */
const MAX_EXTENSION_CHARS = 16;
/** File names kept in the facts are cut to this (they go into an SMTP reply and a log line). */
const MAX_NAME_CHARS = 64;

export const NO_ATTACHMENTS: AttachmentFacts = { count: 0, largest: { bytes: 0, filename: '' }, extensions: [], extensionsCut: false, executable: undefined };

/** The extension of a file name: after its last dot, lower-cased, trailing dots and spaces dropped (Windows ignores them). */
export function extensionOf(filename: string): string {
  const name = filename.replace(/[. ]+$/, '');
  const dot = name.lastIndexOf('.');
  return dot < 0 ? '' : name.slice(dot + 1, dot + 1 + MAX_EXTENSION_CHARS).toLowerCase();
}

/** PE ("MZ") or ELF (0x7F "ELF") by the first bytes. */
export function executableKind(head: Uint8Array): 'pe' | 'elf' | undefined {
  if (head.length >= 2 && head[0] === 0x4d && head[1] === 0x5a) return 'pe';
  if (head.length >= 4 && head[0] === 0x7f && head[1] === 0x45 && head[2] === 0x4c && head[3] === 0x46) return 'elf';
  return undefined;
}

/** The facts of `parts` (each attachment's file name, as the message gives it, and decoded bytes). */
export function attachmentFacts(parts: readonly { filename: string | null | undefined; bytes: Uint8Array }[]): AttachmentFacts {
  const facts: AttachmentFacts = { count: parts.length, largest: { bytes: 0, filename: '' }, extensions: [], extensionsCut: false, executable: undefined };
  const seen = new Set<string>();
  for (const part of parts) {
    const filename = (part.filename ?? '').slice(0, 255);
    const shown = filename.slice(0, MAX_NAME_CHARS);
    if (part.bytes.byteLength > facts.largest.bytes) facts.largest = { bytes: part.bytes.byteLength, filename: shown };
    const ext = extensionOf(filename);
    if (ext !== '' && !seen.has(ext)) {
      if (seen.size < MAX_EXTENSIONS) {
        seen.add(ext);
        facts.extensions.push({ ext, filename: shown });
      } else facts.extensionsCut = true;
    }
    if (!facts.executable) {
      const kind = executableKind(part.bytes.subarray(0, 4));
      if (kind) facts.executable = { kind, filename: shown };
    }
  }
  return facts;
}
