// The parser's thread hands the store a mail's words rather than its text
// (search-text.ts searchWordsOf); the store folds and namespaces them as it did the
// text (search-words.ts indexWords). Both must give the index exactly the same words.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Email } from 'postal-mime';
import { searchTextOf, searchWordsOf } from '../../src/mail/parse/search-text.js';
import { indexWords, searchWords } from '../../src/storage/search-words.js';

const TEXTS = [
  'Your verification code is 482913',
  'Crème brûlée, naïve café — ÉLAN, Ærø and Øresund',
  'İstanbul İİ ıi; ß ẞ straße STRASSE; ﬁnance ﬂow ＡＢＣ１２３ ①②',
  'Ωμέγα ΣΊΣΥΦΟΣ σίσυφος; Ёжик; Ελληνικά; 日本語のテキスト 漢字; العربية',
  'alice@example.com, bob+tag@mail.example.org; https://example.com/a?b=c&d=e#f',
  'repeat repeat REPEAT Repeat répéter',
  '',
  '   \r\n\t ',
  'a\u0301\u0327 combining marks alone: \u0301\u0302 x\u0308y',
  '🙂 emoji 👍🏽 and ZWJ 👩‍💻 sequences, 2025-11-27 12:30',
];

describe('search words made in the parser thread', () => {
  for (const text of TEXTS) {
    it(`the index gets the same words from the words as from the text: ${JSON.stringify(text.slice(0, 40))}`, () => {
      const words = [...new Set(searchWords(text))].join(' ');
      assert.deepEqual(indexWords(42, words), indexWords(42, text));
    });
  }

  it('folded ASCII words (read without folding) and any other text give each word once, in its namespace', () => {
    assert.deepEqual(indexWords(3, 'code 42 code x'), ['z3zcode', 'z3z42', 'z3zx']);
    assert.deepEqual(indexWords(3, 'Code  42 code'), ['z3zcode', 'z3z42']);
    assert.deepEqual(indexWords(3, ''), []);
  });

  it('searchWordsOf: the words of the search text (subject, people, text), each once, in order', () => {
    const email = {
      subject: 'Your Code: 482913',
      from: { name: 'Ünïcode Sender', address: 'sender@example.com' },
      to: [{ name: 'Alice', address: 'alice@example.com' }, { name: 'Team', group: [{ name: 'Bob', address: 'bob@example.org' }] }],
      text: 'Enter code 482913. Your code expires soon.',
      headers: [],
      attachments: [],
    } as unknown as Email;
    const words = searchWordsOf(email);
    assert.equal(words, 'your code 482913 unicode sender example com alice bob org enter expires soon');
    assert.deepEqual(indexWords(7, words), indexWords(7, searchTextOf(email)));
    assert.equal(searchWordsOf(undefined), '');
  });
});
