// The worker of send-job.ts: reads and composes one large send request off the event loop.
import { oneShotAnswer } from '../workers/one-shot.js';
import { composeBytes, type SendJob } from './send-job.js';

oneShotAnswer<SendJob>(composeBytes);
