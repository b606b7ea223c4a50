// Preloaded into a server under test (node --import): counts the parsed views handed to
// the parser threads (the tasks of op "view" posted to a worker) and writes the count to
// PARSE_COUNT_FILE after each, so a bench can tell how often a mail was parsed.
import { writeFileSync } from 'node:fs';
import process from 'node:process';
import { MessagePort } from 'node:worker_threads';

const file = process.env.PARSE_COUNT_FILE;
if (file) {
  let views = 0;
  writeFileSync(file, '0');
  const post = MessagePort.prototype.postMessage;
  MessagePort.prototype.postMessage = function (message, ...rest) {
    if (message && typeof message === 'object' && message.task && message.task.op === 'view') writeFileSync(file, String(++views));
    return post.call(this, message, ...rest);
  };
}
