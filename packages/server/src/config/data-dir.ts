// DATA_DIR holds every mail and the secrets that sign tokens: it is created 0700
// and its files 0600 (docs/security.md "Files"), whatever the umask. Modes that
// an operator set are not changed behind their back; a looser one is reported.
import { mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** Creates `dir` (0700) when missing; returns one warning per existing entry that others can read. */
export function prepareDataDir(dir: string): string[] {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const warnings: string[] = [];
  const mode = statSync(dir).mode & 0o777;
  if (mode & 0o077) warnings.push(`${dir} is mode ${mode.toString(8)}: other users of this machine can reach the mail in it; run chmod 700 ${dir}`);
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const st = statSync(path);
    if (st.isFile() && st.mode & 0o077) {
      warnings.push(`${path} is mode ${(st.mode & 0o777).toString(8)}: other users of this machine can read it; run chmod 600 ${path}`);
    }
  }
  return warnings;
}
