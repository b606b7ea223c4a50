// The codes corpus (docs/decisions.md "Codes and links"): the mails the server's test of
// code and link extraction asserts on, read here as data (every .eml of the folder,
// sorted, and expectations.json), so that the bench and the test measure the same mails.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './paths.js';

/** The corpus folder, relative to the repository root (as the results record it). */
export const CODES_CORPUS = 'packages/server/test/fixtures/codes-corpus';
const DIR = join(ROOT, CODES_CORPUS);

export interface Expectation {
  language: string;
  kind: string;
  /** "with the rules", or "holdout 1" / "holdout 2": written before the rules were tuned for it. */
  written: string;
  codes: string[];
  /** The link a test would follow. */
  link?: string;
}

export const expectations = JSON.parse(readFileSync(join(DIR, 'expectations.json'), 'utf8')) as Record<string, Expectation>;

/** The mails' file names, sorted. */
export const corpusFiles: string[] = readdirSync(DIR)
  .filter((f) => f.endsWith('.eml'))
  .sort();

export function readCorpusMail(file: string): Buffer {
  return readFileSync(join(DIR, file));
}
