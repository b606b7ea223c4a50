// Answers that carry a mail's message or an attachment (GET /api/mail/{uuid} of a large
// mail, /mailtm/sources/{id}, the .eml download, attachments). Each is written as its
// reader takes it (a stream from the store's parts, with backpressure), so a reader that
// does not read holds a part, not the message; and still (docs/security.md "Large answers"):
// - one client has at most HTTP_ANSWER_BYTES_PER_CLIENT of such answers being sent at
//   once (by their sizes); one more is 429 with Retry-After, except the first, whatever
//   its size, so that every mail can be read;
// - an answer whose reader takes nothing for HTTP_SEND_STALL_TIMEOUT, while bytes wait
//   to be written, is ended with its connection.
import type { ServerResponse } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { HttpConfig } from '../config/index.js';
import { AppError } from '../domain/errors.js';
import { clientKey } from './rate-limit.js';

/** Seconds a client over its cap is told to wait: the answers it has open finish or stall out meanwhile. */
const RETRY_AFTER_SECONDS = 5;

/** HTTP_ANSWER_BYTES_PER_CLIENT and HTTP_SEND_STALL_TIMEOUT, of the http section. */
export type LargeAnswerLimits = Pick<HttpConfig, 'answerBytesPerClient' | 'sendStallTimeoutMs'>;

export interface LargeAnswers {
  /**
   * Counts an answer of `bytes` for the request's client until its response closes, and
   * ends the connection if its reader stalls; throws a 429 AppError past the client's cap.
   */
  admit(request: FastifyRequest, reply: FastifyReply, bytes: number): void;
  /** Bytes of large answers being sent to the client of `ip` now. */
  inFlight(ip: string): number;
}

/**
 * Resets the connection of `res` once, while bytes wait to be written, none has gone out
 * for `stallMs`. Progress is what the socket has finished writing (bytesWritten counts
 * what is still buffered as well, writableLength is that buffer); checked a few times
 * a stall limit, so a stalled reader is gone within 1.25 times the limit.
 */
export function endWhenStalled(res: ServerResponse, stallMs: number): void {
  const socket = res.socket;
  if (!socket) return;
  const written = () => socket.bytesWritten - socket.writableLength;
  let last = written();
  let since = Date.now();
  const timer = setInterval(
    () => {
      const now = written();
      if (now !== last || socket.writableLength === 0) {
        last = now;
        since = Date.now();
      } else if (Date.now() - since >= stallMs) {
        clearInterval(timer);
        // A reset, not a close: the kernel drops what it still holds for the reader instead of trying to send it.
        socket.resetAndDestroy();
      }
    },
    Math.max(50, Math.min(1000, stallMs / 4)),
  );
  timer.unref();
  res.once('close', () => clearInterval(timer));
}

export function createLargeAnswers(limits: LargeAnswerLimits): LargeAnswers {
  const open = new Map<string, number>();
  return {
    admit(request, reply, bytes) {
      // Already closed (the client went away while the mail was read): nothing to count or watch.
      if (reply.raw.closed || !reply.raw.socket || reply.raw.socket.destroyed) return;
      const key = clientKey(request.ip);
      const sending = open.get(key) ?? 0;
      if (sending > 0 && sending + bytes > limits.answerBytesPerClient) {
        throw new AppError('rate_limited', `At most ${limits.answerBytesPerClient} bytes of mail and attachments may be sent to one client at once; finish a download first.`, RETRY_AFTER_SECONDS);
      }
      open.set(key, sending + bytes);
      reply.raw.once('close', () => {
        const left = (open.get(key) ?? bytes) - bytes;
        if (left > 0) open.set(key, left);
        else open.delete(key);
      });
      endWhenStalled(reply.raw, limits.sendStallTimeoutMs);
    },
    inFlight: (ip) => open.get(clientKey(ip)) ?? 0,
  };
}
