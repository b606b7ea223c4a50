// The worker of message-view.ts: reshapes one large message into MailHog's JSON off the
// event loop and sends the bytes back (moved, not copied).
import { oneShotAnswer } from '../workers/one-shot.js';
import { reshape, type MailhogJob } from './message-view.js';

oneShotAnswer<MailhogJob>(reshape);
