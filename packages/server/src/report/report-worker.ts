// The report's worker (service.ts): the sections that read the message, built off the
// event loop. Input: a 4-byte length, the parsed view's JSON, then the raw message.
import { oneShotAnswer } from '../workers/one-shot.js';
import { staticSections, type ReportContent } from './static-report.js';

oneShotAnswer<null>((_data, input) => {
  const length = input.readUInt32BE(0);
  const content = JSON.parse(input.subarray(4, 4 + length).toString('utf8')) as ReportContent;
  return JSON.stringify(staticSections(content, input.subarray(4 + length)));
});
