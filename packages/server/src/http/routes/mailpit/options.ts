// What every route group of the Mailpit-compatible API is registered with (index.ts).
import type { onRequestAsyncHookHandler } from 'fastify';
import type { SandboxService } from '../../../sandboxes/types.js';
import type { HttpDeps } from '../../deps.js';
import type { LargeAnswers } from '../../large-answers.js';

export interface MailpitRouteOptions {
  deps: HttpDeps;
  sandboxes: SandboxService;
  /** Opens the request's sandbox from its Basic credentials (respond.ts sandboxHook). */
  hook: onRequestAsyncHookHandler;
  /** The count of large answers per client (a message's source, an attachment). */
  answers: LargeAnswers;
}
