// Request bodies of the /api routes (docs/api.md "Conventions"). Fastify parses JSON and
// plain text. Two rules on top:
// - An empty body is no body, whatever its Content-Type: many HTTP wrappers send
//   `Content-Type: application/json` on every request, a DELETE without a body included.
//   A route that needs a body refuses none with its own 400 (new_address takes it as {}).
// - A route whose body must be JSON answers 415 to plain text, as to any other media type,
//   rather than parsing the text and refusing it as a malformed object.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sendText } from './errors.js';

export function acceptEmptyJson(app: FastifyInstance): void {
  const json = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) =>
    (body as string).length === 0 ? done(null, undefined) : json(request, body as string, done),
  );
}

const isJson = (type: string | undefined) => /^application\/json\s*(;|$)/i.test(type ?? '');

/** preValidation of a route that takes JSON only. */
export async function jsonOnly(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
  if (request.body === undefined || isJson(request.headers['content-type'])) return undefined;
  return sendText(reply, 415, 'The body must be JSON (Content-Type: application/json).');
}
