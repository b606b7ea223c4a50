// The search syntax's parser (storage/search-query.ts), alone: the terms it makes of a
// query, and the reason it gives for one it refuses.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_SEARCH_TERMS, parseSearchQuery, toParsedSearch, type SearchTerm } from '../../../src/storage/search-query.js';
import { AppError } from '../../../src/domain/errors.js';

const terms = (q: string): SearchTerm[] => {
  const r = parseSearchQuery(q);
  assert.ok(r.ok, `${q}: ${r.ok ? '' : r.reason}`);
  return r.search.terms;
};
const reason = (q: string): string => {
  const r = parseSearchQuery(q);
  assert.ok(!r.ok, `${q} parsed`);
  return r.reason;
};
const word = (w: string, prefix = w.length >= 3) => ({ word: w, prefix });

describe('search query parser', () => {
  it('free words: folded, split at punctuation, prefixes from 3 characters, a quoted phrase whole', () => {
    assert.deepEqual(terms('Café shop.example a'), [
      { kind: 'words', words: [word('cafe')], negated: false },
      { kind: 'words', words: [word('shop'), word('example')], negated: false },
      { kind: 'words', words: [word('a')], negated: false },
    ]);
    assert.deepEqual(terms('"Your Order"'), [{ kind: 'words', words: [word('your', false), word('order', false)], negated: false }]);
    assert.deepEqual(terms('-spam -"two words"'), [
      { kind: 'words', words: [word('spam')], negated: true },
      { kind: 'words', words: [word('two', false), word('words', false)], negated: true },
    ]);
    assert.deepEqual(terms('x'.repeat(80)), [{ kind: 'words', words: [word('x'.repeat(64))], negated: false }], 'a long word is cut');
    assert.deepEqual(terms(''), []);
    assert.deepEqual(terms('  - ... *() '), [], 'punctuation and a lone - make no terms');
    assert.deepEqual(terms('--abc'), [{ kind: 'words', words: [word('abc')], negated: true }]);
    assert.deepEqual(terms('re:hello https://x.example'), [
      { kind: 'words', words: [word('re', false), word('hello')], negated: false },
      { kind: 'words', words: [word('https'), word('x', false), word('example')], negated: false },
    ], 'an unknown field is free text');
  });

  it('fields: from, to, subject (lower-cased, quoted values), has:attachment, is:read/unread, before/after as UTC days', () => {
    assert.deepEqual(terms('FROM:Alice to:"Support Team" -subject:"Re: Hi"'), [
      { kind: 'from', value: 'alice', negated: false },
      { kind: 'to', value: 'support team', negated: false },
      { kind: 'subject', value: 're: hi', negated: true },
    ]);
    assert.deepEqual(terms('has:attachment -has:Attachments is:read is:unread'), [
      { kind: 'attachment', negated: false },
      { kind: 'attachment', negated: true },
      { kind: 'read', negated: false },
      { kind: 'read', negated: true },
    ]);
    assert.deepEqual(terms('-is:unread'), [{ kind: 'read', negated: false }], 'not unread is read');
    assert.deepEqual(terms('after:2024-02-29 -before:2024-03-01'), [
      { kind: 'after', at: Date.UTC(2024, 1, 29), negated: false },
      { kind: 'before', at: Date.UTC(2024, 2, 1), negated: true },
    ]);
  });

  it("Mailpit's filters: cc: bcc: reply-to: filename: tag: message-id: (brackets dropped), is:tagged, larger:/smaller: sizes", () => {
    assert.deepEqual(terms('cc:Carol -bcc:x@y.example reply-to:Help filename:"Invoice.PDF" tag:"Sign Up" message-id:<Abc@Shop.Example>'), [
      { kind: 'cc', value: 'carol', negated: false },
      { kind: 'bcc', value: 'x@y.example', negated: true },
      { kind: 'reply-to', value: 'help', negated: false },
      { kind: 'filename', value: 'invoice.pdf', negated: false },
      { kind: 'tag', value: 'sign up', negated: false },
      { kind: 'message-id', value: 'abc@shop.example', negated: false },
    ]);
    assert.deepEqual(terms('is:tagged -is:TAGGED'), [
      { kind: 'tagged', negated: false },
      { kind: 'tagged', negated: true },
    ]);
    assert.deepEqual(
      terms('larger:500 larger:500K smaller:1M smaller:2.5MB larger:1KiB larger:3GiB smaller:1g').map((t) => (t.kind === 'larger' || t.kind === 'smaller' ? t.bytes : -1)),
      [500, 500_000, 1_000_000, 2_500_000, 1024, 3 * 1024 ** 3, 1_000_000_000],
    );
    assert.match(reason('larger:huge'), /larger:huge is not a size; write it as bytes or with K, M or G/);
    assert.match(reason('smaller:1T'), /not a size/);
    assert.match(reason('addressed:alice'), /addressed: is not supported/);
    assert.match(reason(`tag:${'x'.repeat(300)}`), /tag: takes at most 256 characters/);
    assert.deepEqual(terms('e-mail:x'), [{ kind: 'words', words: [{ word: 'e', prefix: false }, { word: 'mail', prefix: true }, { word: 'x', prefix: false }], negated: false }], 'a word with a hyphen and a colon is words');
  });

  it('refuses bad syntax with a reason that says what to write', () => {
    assert.match(reason('abc "def'), /quote at character 5 is not closed/);
    assert.match(reason('from:'), /from: needs a value, e\.g\. from:alice@example\.com/);
    assert.match(reason('subject: x'), /subject: needs a value/);
    assert.match(reason('is:starred'), /is:starred is not known; is:read, is:unread and is:tagged are/);
    assert.match(reason('has:pdf'), /has:pdf is not known; has:attachment is/);
    assert.match(reason('before:2023-02-29'), /before:2023-02-29 is not a date; write it as YYYY-MM-DD/);
    assert.match(reason('after:01/05/2024'), /not a date/);
    assert.match(reason('one two three four five six seven eight nine'), new RegExp(`9 terms; at most ${MAX_SEARCH_TERMS} are allowed`));
    assert.match(reason('a.b.c.d.e.f is:read from:x after:2024-01-01'), /9 terms/, 'each word of a token and each field counts');
    assert.equal(terms('a a a a a a a a a a from:x FROM:X').length, 2, 'a term given twice is kept, and counted, once');
  });

  it('toParsedSearch: a string is parsed, bad syntax a bad_request AppError; a parsed search passes as is', () => {
    const parsed = toParsedSearch('from:x');
    assert.deepEqual(parsed, { terms: [{ kind: 'from', value: 'x', negated: false }] });
    assert.equal(toParsedSearch(parsed), parsed);
    assert.throws(() => toParsedSearch('"open'), (err: unknown) => err instanceof AppError && err.code === 'bad_request');
  });
});
