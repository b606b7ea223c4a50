// The worker of message-view.ts: reshapes one large parsed view off the event loop and
// sends the bytes back (moved, not copied).
import { oneShotAnswer } from '../workers/one-shot.js';
import { reshape, type ViewJob } from './message-view.js';

oneShotAnswer<ViewJob>(reshape);
