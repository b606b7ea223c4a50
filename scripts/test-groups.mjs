// From the test mirror (scripts/test-build.mjs), scripts/test.mjs runs most short test files a few to a process: a
// group file, written into the mirror, that loads each member inside a describe() named
// after it, so that its tests, and its before/after hooks, stay that file's own. A process
// of its own costs each file about a second of CPU before its first test (Node's start-up,
// the test runner, the modules it imports); a group pays it once and loads the modules its
// members share once (docs/architecture.md "Running the suite").
//
// A member is loaded with require(), which loads an ES module synchronously (Node
// ^20.19, ^22.12), so that describe() registers its tests before the group's file ends.
// A file with a top-level await cannot be loaded so; it keeps a process of its own, as do
// the files of KEEP_OWN_PROCESS.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

// Files that measure or change the process itself, which a neighbour in the same process
// would disturb or be disturbed by.
export const KEEP_OWN_PROCESS = new Map([
  ['packages/server/test/mail/parse/parse-threads.test.ts', 'counts the worker threads of its process'],
  ['packages/server/test/workers/module-worker.test.ts', 'sets TEMP_INBOX_WORKERS for the workers its process starts'],
  ['packages/server/test/storage/storage.test.ts', "bounds the process's memory while it reads large mails"],
  ['packages/server/test/storage/sqlite-busy.test.ts', "times its process's event loop"],
  ['packages/server/test/mail/parse/parsed-mail.test.ts', "measures its process's event-loop utilisation"],
  ['packages/server/test/sandboxes/sandbox-decoy.test.ts', 'checks that its process built the decoy password hash only at its first use'],
  ['packages/server/test/mail/auth/mailauth-patches.test.ts', "checks which of mailauth's modules its process loaded, and when"],
]);

// A top-level statement is written from the first column; one that awaits outside an
// async function cannot be required.
const TOP_LEVEL_AWAIT = /^(?![^\n]*\basync\b)[^\s/*][^\n]*\bawait\b/m;

/** Why `file` (a path in the repository) keeps a process of its own, or undefined. */
export function ownProcessReason(root, file) {
  if (KEEP_OWN_PROCESS.has(file)) return KEEP_OWN_PROCESS.get(file);
  if (TOP_LEVEL_AWAIT.test(readFileSync(join(root, file), 'utf8'))) return 'awaits at its top level, which require() cannot load';
  return undefined;
}

/**
 * Splits `files` (in run order) into runs of at most `size` consecutive groupable files,
 * and writes a group file for each run of two or more under `dir`. Returns the units to
 * run, in order: `{ path, members }`, where `path` is the file a process runs and
 * `members` the repository paths of the test files in it.
 */
export function groupFiles({ root, files, size, dir, compiled, groupable }) {
  mkdirSync(dir, { recursive: true });
  const units = [];
  let run = [];
  const flush = () => {
    if (run.length === 1) units.push({ path: compiled(run[0]), members: run });
    else if (run.length > 1) {
      const path = join(dir, `group-${String(units.length + 1).padStart(3, '0')}.test.js`);
      const lines = run.map((f) => `describe(${JSON.stringify(f)}, () => { require(${JSON.stringify(compiled(f))}); });`);
      writeFileSync(path, ["import { describe } from 'node:test';", "import { createRequire } from 'node:module';", 'const require = createRequire(import.meta.url);', ...lines, ''].join('\n'));
      units.push({ path, members: run });
    }
    run = [];
  };
  for (const f of files) {
    if (!groupable(f) || ownProcessReason(root, f) !== undefined) {
      flush();
      units.push({ path: compiled(f), members: [f] });
      continue;
    }
    run.push(f);
    if (run.length === size) flush();
  }
  flush();
  return units;
}
