// Request bodies of the /api routes (docs/api.md "Conventions"). Fastify parses JSON and
// plain text. Three rules on top:
// - An empty body is no body, whatever its Content-Type: many HTTP wrappers send
//   `Content-Type: application/json` on every request, a DELETE without a body included.
//   A route that needs a body refuses none with its own 400 (new_address takes it as {}).
// - A route whose body must be JSON answers 415 to plain text, as to any other media type,
//   rather than parsing the text and refusing it as a malformed object.
// - A compressed body (Content-Encoding) is 415, and a key that would pollute prototypes
//   is named as such, rather than both being called malformed JSON.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { badRequest, unsupportedMediaType } from '../domain/errors.js';
import { sendText } from './errors.js';

export function acceptEmptyJson(app: FastifyInstance): void {
  const json = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, raw, done) => {
    const body = raw as string;
    if (body.length === 0) return done(null, undefined);
    // Not decompressed here: a compressed body would otherwise be called malformed JSON.
    const encoding = request.headers['content-encoding'];
    if (encoding !== undefined && !/^\s*identity\s*$/i.test(encoding)) return done(unsupportedMediaType('Content-Encoding is not supported; send the body uncompressed.'));
    void json(request, body, (err, value) => {
      // Valid JSON the parser refused: a "__proto__" or "constructor.prototype" key (prototype pollution).
      if (err && isValidJson(body)) return done(badRequest('The body has a "__proto__" or "constructor.prototype" key, which is refused.'));
      done(err, value);
    });
  });
}

function isValidJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

const isJson = (type: string | undefined) => /^application\/json\s*(;|$)/i.test(type ?? '');

/** preValidation of a route that takes JSON only. */
export async function jsonOnly(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
  if (request.body === undefined || isJson(request.headers['content-type'])) return undefined;
  return sendText(reply, 415, 'The body must be JSON (Content-Type: application/json).');
}
