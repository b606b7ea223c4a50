// Preloaded into a server under test (node --import): counts the parsed views handed to
// the parser threads (the tasks of op "view" posted to a worker) and writes the count to
// PARSE_COUNT_FILE after each, so a bench can tell how often a mail was parsed. The
// write is asynchronous, one at a time, the latest count last: a synchronous one held the
// server's thread for up to 70 ms on a loaded machine, inside the post of the very task
// the hostile bench times.
import { writeFile, writeFileSync } from 'node:fs';
import process from 'node:process';
import { MessagePort } from 'node:worker_threads';

const file = process.env.PARSE_COUNT_FILE;
if (file) {
  let views = 0;
  let written = 0;
  let writing = false;
  const flush = () => {
    if (writing || written === views) return;
    writing = true;
    const n = views;
    writeFile(file, String(n), () => {
      writing = false;
      written = n;
      flush();
    });
  };
  writeFileSync(file, '0');
  const post = MessagePort.prototype.postMessage;
  MessagePort.prototype.postMessage = function (message, ...rest) {
    if (message && typeof message === 'object' && message.task && message.task.op === 'view') {
      views++;
      flush();
    }
    return post.call(this, message, ...rest);
  };
}
