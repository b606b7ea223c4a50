// What every route group of the mail.tm-compatible API is registered with (index.ts).
import type { MailtmService } from '../../../mailtm/service.js';
import type { HttpDeps } from '../../deps.js';
import type { LargeAnswers } from '../../large-answers.js';
import type { StreamAdmission } from '../../stream-admission.js';

export interface MailtmRouteOptions {
  deps: HttpDeps;
  mailtm: MailtmService;
  streams: StreamAdmission;
  /** Large answers' per-client cap and stall limit (sources, downloads, attachments). */
  answers: LargeAnswers;
}
