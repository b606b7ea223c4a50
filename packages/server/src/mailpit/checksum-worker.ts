// The worker of checksums.ts: hashes one message's attachments off the event loop.
import { oneShotAnswer } from '../workers/one-shot.js';
import { checksumJson } from './checksums.js';

oneShotAnswer<number[]>(checksumJson);
