// What every bot check gives the HTTP side (challenge.ts picks one by CHALLENGE).
import type { PowChallenge } from '@temp-inbox/api';
import type { ChallengeMode } from '../config/index.js';

export interface Challenge {
  readonly mode: ChallengeMode;
  /** Resolves when the token passes; throws a 400 AppError when it is missing or refused, 503 when it cannot be checked. */
  verify(token: string | undefined, remoteIp: string): Promise<void>;
  /** A new proof-of-work challenge (GET /api/challenge); only in mode pow. */
  issue?(): Promise<PowChallenge>;
}
