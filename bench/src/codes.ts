// 7. Verification codes (docs/decisions.md "Codes and links"): the built server's
// mailMetadata() on every mail of the codes corpus (lib/codes-corpus.ts), against its
// expectations.json.
// Precision = real codes among those reported; recall = real codes found.
// Targets: both 1.0. Informational: how often the link a test would follow is
// among `links`, and first in them. Quick and full runs are the same.
//
//   node --import tsx bench/src/run.ts --only=codes
import { performance } from 'node:perf_hooks';
import { mailMetadata } from '@temp-inbox/server';
import { CODES_CORPUS, corpusFiles, expectations, readCorpusMail } from './lib/codes-corpus.js';
import { verdict, type Bench, type Row } from './lib/report.js';

export const codes: Bench = async ({ log }) => {
  const files = corpusFiles;
  let found = 0;
  let reported = 0;
  let expected = 0;
  let links = 0;
  let linkListed = 0;
  let linkFirst = 0;
  let ms = 0;
  const wrong: { file: string; got: string[]; want: string[] }[] = [];
  for (const file of files) {
    const e = expectations[file];
    if (!e) throw new Error(`${file} has no entry in expectations.json`);
    const raw = readCorpusMail(file);
    const t0 = performance.now();
    const m = await mailMetadata(raw);
    ms += performance.now() - t0;
    const want = new Set(e.codes);
    const hits = m.codes.filter((c) => want.has(c)).length;
    found += hits;
    reported += m.codes.length;
    expected += want.size;
    if (hits !== m.codes.length || hits !== want.size) wrong.push({ file, got: m.codes, want: e.codes });
    if (e.link) {
      links++;
      if (m.links.includes(e.link)) linkListed++;
      if (m.links[0] === e.link) linkFirst++;
    }
  }
  const precision = reported ? found / reported : 1;
  const recall = expected ? found / expected : 1;
  const languages = new Set(Object.values(expectations).map((e) => e.language)).size;
  for (const w of wrong) log(`${w.file}: got ${JSON.stringify(w.got)}, expected ${JSON.stringify(w.want)}`);
  log(`${files.length} mails: precision ${precision.toFixed(3)}, recall ${recall.toFixed(3)}; ${(ms / files.length).toFixed(2)} ms per mail to parse and extract`);
  const rows: Row[] = [
      {
        bench: 'codes',
        measure: `codes in ${files.length} corpus mails, ${languages} languages`,
        ours: `${found} of ${reported} reported real, ${found} of ${expected} found`,
        baseline: '',
        result: `precision ${precision.toFixed(2)}, recall ${recall.toFixed(2)}`,
        target: 'both 1.0',
        verdict: verdict(precision === 1 && recall === 1),
        values: { mails: files.length, languages, found, reported, expected, precision, recall },
      },
      {
        bench: 'codes',
        measure: `the link to follow, in ${links} of those mails`,
        ours: `listed in ${linkListed}, first in ${linkFirst}`,
        baseline: '',
        result: `listed ${linkListed}/${links}`,
        target: '(none)',
        verdict: 'info',
        values: { links, linkListed, linkFirst },
      },
  ];
  return { rows, details: { corpus: CODES_CORPUS, msPerMail: ms / files.length, wrong } };
};
