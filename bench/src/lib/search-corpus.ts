// The text of the mails the search bench seeds (bench/src/children/seed.ts with
// `search`), and the queries it asks. Every mail has the subject, people and text of a
// transactional mail (so a few words are in all of them, as "code" is in real inboxes),
// plus eight words drawn from a vocabulary of 5,000 made-up words with a skewed
// (roughly Zipf) distribution, so that some words are in a good part of the store and
// most are rare. One mail in 1,000 carries "marmalade". Deterministic: mail i always
// has the same text.

const SYLLABLES = ['ka', 'lo', 'mi', 'ren', 'tas', 'vu', 'pel', 'dor', 'ni', 'sha', 'bex', 'tor', 'qui', 'zan', 'fem', 'gol', 'hy', 'jup', 'wes', 'yor'];
const VOCABULARY = 5000;

/** Made-up word number k: three syllables, e.g. "kalomi"; never a prefix of "marmalade", "verif" or "zyzzyva". */
export function vocabularyWord(k: number): string {
  const n = SYLLABLES.length;
  return SYLLABLES[k % n]! + SYLLABLES[Math.floor(k / n) % n]! + SYLLABLES[Math.floor(k / (n * n)) % n]! + (k >= n * n * n ? String(Math.floor(k / (n * n * n))) : '');
}

/** A small deterministic hash (mulberry32 step) of two integers. */
function hash(a: number, b: number): number {
  let t = (a * 0x9e3779b1 + b * 0x85ebca6b) >>> 0;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

const PARAGRAPH =
  'Hello, thanks for signing up. To finish creating your account, confirm your address with the verification code below or follow the link. ' +
  'If you did not ask for this, you can safely ignore this message.';

/** What mail `i` (to `to`) is found by, as the server's searchTextOf() would make it: subject, people, text. */
export function searchTextFor(i: number, to: string): string {
  // Zipf-like: word rank r is drawn with probability ~ 1/r (inverse of the harmonic CDF, approximated).
  const words: string[] = [];
  for (let j = 0; j < 8; j++) words.push(vocabularyWord(Math.floor(Math.exp(hash(i, j) * Math.log(VOCABULARY))) - 1));
  if (hash(i, 99) < 0.001) words.push('marmalade');
  return [`Your verification code ${i}`, 'Example App no-reply@app.example.com', ` ${to}`, `${PARAGRAPH}\nYour code is ${100000 + (i % 900000)}. ${words.join(' ')}`].join('\n');
}

/** The searches the bench times, as a person types them. */
export const QUERIES: { name: string; q: string }[] = [
  { name: 'common word (in every mail)', q: 'code' },
  { name: 'frequent made-up word', q: vocabularyWord(0) },
  { name: 'rare word (1 mail in 1,000)', q: 'marmalade' },
  { name: 'no match', q: 'zyzzyva' },
  { name: 'prefix of a common word', q: 'verif' },
  { name: 'two words', q: 'confirm marmalade' },
];
