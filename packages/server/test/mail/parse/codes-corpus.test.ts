// Verification codes and links on a corpus of realistic mails
// (test/fixtures/codes-corpus/, described in its README.md): every mail is parsed
// the way the server does (parseMessage + buildMetadata, mail/parse/metadata.ts), and
// its `codes` must be exactly the expected ones (precision and recall 1.0) and
// its `links` must hold the expected primary link. Then the rules one by one,
// and extraction time on inputs aimed at them.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { extractCodes, SCAN_CHARS } from '../../../src/mail/parse/extract.js';
import { buildMetadata, parseMessage } from '../../../src/mail/parse/metadata.js';
import { corpusFiles as files, expectations, readCorpusMail } from '../../fixtures/codes-corpus/corpus.js';
import { runsText, timedRuns } from '../../helpers/timing.js';

async function metadataOf(file: string) {
  const raw = readCorpusMail(file);
  return buildMetadata(await parseMessage(raw), raw.length);
}

describe('codes corpus', () => {
  it('has at least 40 mails in at least 5 languages, each with its expectation', () => {
    assert.deepEqual(files, Object.keys(expectations).sort(), 'one expectation per .eml and no other');
    assert.ok(files.length >= 40, `${files.length} mails`);
    const languages = new Set(Object.values(expectations).map((e) => e.language));
    assert.ok(languages.size >= 5, [...languages].join(', '));
  });

  for (const file of files) {
    const e = expectations[file]!;
    it(`${file} (${e.language}, ${e.kind}): codes ${JSON.stringify(e.codes)}${e.link ? ', its link' : ''}`, async () => {
      const m = await metadataOf(file);
      assert.deepEqual(m.codes, e.codes, `${file}: ${m.subject}`);
      if (e.link) assert.ok(m.links.includes(e.link), `${e.link} not in ${JSON.stringify(m.links)}`);
    });
  }

  it('precision and recall over the corpus are both 1.0', async (t) => {
    let found = 0;
    let reported = 0;
    let expected = 0;
    for (const file of files) {
      const got = (await metadataOf(file)).codes;
      const want = new Set(expectations[file]!.codes);
      found += got.filter((c) => want.has(c)).length;
      reported += got.length;
      expected += want.size;
    }
    t.diagnostic(`${files.length} mails: ${found} of ${reported} codes reported are real, ${found} of ${expected} real codes found`);
    assert.equal(found / reported, 1, 'precision');
    assert.equal(found / expected, 1, 'recall');
  });
});

describe('code extraction rules (docs/decisions.md "Codes and links")', () => {
  const cases: [string, string, string[]][] = [
    // Shapes, and how a code is reported.
    ['4-8 digits', 'Your code is 0482 and the other code is 48291374', ['0482', '48291374']],
    ['digit groups as written, any space as one space', 'Your code is 482\u00a0913', ['482 913']],
    ['hyphenated, letters and digits', 'Your code: K7P-9QX', ['K7P-9QX']],
    ['one digit per table cell is joined', 'Your code:\n 4  8  2  9  1  3 \n', ['482913']],
    ['a year, a date, a decimal, a time are not codes', 'Your code is 2026. Code: 2026-03-14. Code: 1234.56. Code: 12:30', []],
    ['letters only are not a code', 'Your code is ABCDEF', []],
    ['nine digits or more are not a code', 'Your code is 123456789', []],
    // Where the code word is.
    ['code word after: "… is your code"', '4827 is your Ridewell code.', ['4827']],
    ['alone on its line below the code word', 'Enter this code to sign in. It expires soon.\n\n  482913\n', ['482913']],
    ['not past the end of the sentence on the same line', 'Here is your code. Visit us at 548 Market St, CA 94103', []],
    ['no code word, no code', 'Order 482913 shipped to 10115 Berlin', []],
    ['a sign-in word counts only right before the code', 'A sign-in from Berlin, 10115. Sign in with 482913', ['482913']],
    // Labels.
    ['a nearer label wins', 'Your code for your order: confirmation number 84421190', []],
    ['a label that qualifies the code word', 'Sort code: 20-45-77. Approval code 083421. Código postal: 28014', []],
    ['a label that does not', 'Your account code is 4412', ['4412']],
    ['a parenthetical aside is looked past', 'Your TAN for the transfer (IBAN DE89 3704) is: 738291', ['738291']],
    ['promotions are never codes', 'Use code SPRING25 at checkout. Get 20% off with code 482913.', []],
    ['compounds', 'Ihr Bestätigungscode: 558213. Gutscheincode: SOMMER25. Je verificatiecode is 730519.', ['558213', '730519']],
    ['phone numbers and postal codes after the code word', 'Your code? Call +1 (415) 555-0142 or write to PO Box 81226.', []],
  ];
  for (const [name, text, want] of cases) {
    it(name, () => assert.deepEqual(extractCodes('', text), want, text));
  }
});

describe('code extraction is linear on inputs aimed at its rules', () => {
  const M = 1_000_000;
  const fill = (unit: string, head = '', tail = '', size = M) => head + unit.repeat(Math.ceil((size - head.length - tail.length) / unit.length)) + tail;
  /** The code at the end of what is read. */
  const codeLast = (unit: string) => fill(unit, '', ' 482913', SCAN_CHARS - 8);
  const inputs: Record<string, string> = {
    'code word and code': fill('code 123456 '),
    'label and code': fill('order 123456 '),
    'code after an aside': fill('(1234 code) '),
    'unclosed asides': fill('( code 123456 '),
    'single digits': fill('1 '),
    'codes alone on lines': fill('123456\n'),
    promotions: fill('sale code 1234 '),
    'weak words': fill('sign in 1234, '),
    'code word, blank line, code': fill('code\n\n 123456 x\n'),
    'code word after': fill('1234 is your code '),
    'CJK code word': fill('验证码1234'),
    'compound code words': fill('barcode 123456 '),
    'a long word': fill('verification'),
    'hyphen chains': fill('A1B2-'),
    'open parentheses': fill('('),
    // Few tokens, many keywords: the keyword scan then reaches as far as the last token.
    'code words, then a code': codeLast('code '),
    'labels, then a code': codeLast('Bestellnummer order tel. '),
    'CJK words, then a code': codeLast('验证码订单'),
    'asides, then a code': codeLast('(a) '),
    'promotions, then a code': codeLast('sale off '),
    // Keywords are searched near tokens only; tokens with no keyword after them, and tokens spread out.
    'a code word, then tokens': fill('123456 x ', 'code '),
    'tokens 500 characters apart': fill(`123456 ${'x'.repeat(493)}`),
    'tokens 300 characters apart, keywords between': fill(`123456 ${'order code '.repeat(26)}`),
    mixed: fill('Your order 1234-5678 code K7P-9QX at checkout, tel. +49 30 1234 5678 (IBAN DE12 3456) lautet: 482913. '),
  };
  it('1 MB of each (or the 256 KiB that are read) in under 200 ms', (t) => {
    extractCodes('', 'Your code is 482913 (order 1234) at checkout'); // compiles the regexes
    for (const [name, input] of Object.entries(inputs)) {
      const runs = timedRuns(200, () => extractCodes(input.slice(0, 1000), input));
      t.diagnostic(`${name}: ${runsText(runs)}`);
      assert.ok(Math.min(...runs) < 200, `${name}: ${runsText(runs)}`);
    }
  });
});
