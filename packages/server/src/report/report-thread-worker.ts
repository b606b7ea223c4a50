// The report thread's worker (report-thread.ts): the sections that read the message, for
// one message after another. Input: a 4-byte length, the parsed view's JSON, then the raw
// message; answer: the sections' JSON.
import { parentPort } from 'node:worker_threads';
import { staticSections, type ReportContent } from './static-report.js';

parentPort!.on('message', (bytes: Uint8Array) => {
  const input = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const length = input.readUInt32BE(0);
  const content = JSON.parse(input.subarray(4, 4 + length).toString('utf8')) as ReportContent;
  const answer = new TextEncoder().encode(JSON.stringify(staticSections(content, input.subarray(4 + length))));
  parentPort!.postMessage(answer, [answer.buffer]);
});
