// A mail's message as the routes answer it (GET /api/mail/{uuid}, /mailtm/sources/{id}, the
// .eml download), and an attachment's bytes: whole when small (the response cache keeps such answers), else read
// from the store a part at a time as the client takes it, and counted as a large answer
// (large-answers.ts), so that a client that does not read holds a part, not the message.
import type { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { notFound } from '../domain/errors.js';
import { PartsGoneError } from '../storage/parts.js';
import type { MailReader } from '../storage/store.js';
import type { LargeAnswers } from './large-answers.js';
import { pullStream } from './pull-stream.js';
import { piecesAreUtf8, withRawStreamed } from './raw-json.js';
import { DEFAULT_RESPONSE_CACHE_LIMITS } from './response-cache.js';

/** A mail whose message is larger than the response cache keeps is written as a stream, never built whole. */
export const STREAM_RAW_BYTES = DEFAULT_RESPONSE_CACHE_LIMITS.maxEntryBytes;

/** Whether the mail's message is answered as a stream. */
export const streamed = (mail: MailReader): boolean => mail.bytes > STREAM_RAW_BYTES;

/** A part gone while it is read before the answer starts: the mail was deleted meanwhile, a 404 like any deleted mail. */
async function orGone<T>(read: Promise<T>): Promise<T> {
  try {
    return await read;
  } catch (err) {
    if (err instanceof PartsGoneError) throw notFound('No such mail.');
    throw err;
  }
}

/** Pieces read into one buffer (404 when a part is gone meanwhile). */
export async function wholeOf(pieces: AsyncIterable<Buffer> | Iterable<Buffer>): Promise<Buffer> {
  const read: Buffer[] = [];
  await orGone(
    (async () => {
      for await (const piece of pieces) read.push(piece);
    })(),
  );
  return read.length === 1 ? read[0]! : Buffer.concat(read);
}

/** A small mail's message whole (its pieces are in the row already read: no further query). */
export const wholeRaw = (mail: MailReader): Promise<Buffer> => wholeOf(mail.pieces());

/**
 * Stored bytes as a stream that reads a part at a time, for an answer of `bytes` counted as
 * a large answer (its length set). The next part is read only once the response has taken
 * the last (pull-stream.ts): a reader that stops holds the part in flight.
 */
export function streamedBytes(request: FastifyRequest, reply: FastifyReply, answers: LargeAnswers, bytes: number, pieces: AsyncIterable<Buffer> | Iterable<Buffer>): Readable {
  answers.admit(request, reply, bytes);
  reply.header('content-length', String(bytes));
  return pullStream(pieces);
}

/**
 * `serialized` (JSON with `"<field>":""`) with the message in the field, streamed. The
 * parts are read twice: once to know whether the message is UTF-8 (which decides how
 * its first byte above 0x7f is written), once to write it.
 */
export async function streamedRawJson(request: FastifyRequest, reply: FastifyReply, answers: LargeAnswers, mail: MailReader, serialized: string, field?: string): Promise<Readable> {
  answers.admit(request, reply, mail.bytes);
  const utf8 = await orGone(piecesAreUtf8(mail.pieces()));
  return withRawStreamed(serialized, { utf8, pieces: mail.pieces() }, field);
}

/** The message's bytes as they are stored, streamed when large (its length set: a short body means the mail was purged while sent). */
export async function rawBody(request: FastifyRequest, reply: FastifyReply, answers: LargeAnswers, mail: MailReader): Promise<Buffer | Readable> {
  return streamed(mail) ? streamedBytes(request, reply, answers, mail.bytes, mail.pieces()) : wholeRaw(mail);
}
