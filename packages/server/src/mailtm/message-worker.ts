// The worker of message-view.ts: reshapes one large parsed view into mail.tm's Message
// off the event loop, and sends the response bytes back (moved, not copied).
import type { ParsedMailContent } from '@temp-inbox/api';
import { oneShotAnswer } from '../workers/one-shot.js';
import { reshape, type MessageJob } from './message-view.js';

oneShotAnswer<MessageJob>((job, input) => reshape(job, JSON.parse(input.toString('utf8')) as ParsedMailContent));
