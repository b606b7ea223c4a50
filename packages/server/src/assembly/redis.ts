// The Redis connection the nodes share, opened only when REDIS_URL is set.
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { RedisConfig } from '../config/index.js';
import { redisStartupError } from '../startup-errors.js';

/** How long a Redis command may take before it counts as failed (see openRedis). */
export const REDIS_COMMAND_TIMEOUT_MS = 1000;

/**
 * Connects to REDIS_URL, or gives undefined when it is unset. A command Redis does not
 * answer within REDIS_COMMAND_TIMEOUT_MS fails, like one sent while it is disconnected:
 * the limits then count per node in memory and events stay local. Without it a Redis that
 * stops answering but keeps the connection open (a partition, a stalled server) would hold
 * every rate-limited request and every MAIL FROM until TCP gave up, hours later.
 */
export async function openRedis(config: RedisConfig, logger: Logger): Promise<Redis | undefined> {
  if (!config.url) return undefined;
  // Loaded only when configured: a single node on SQLite starts without it (about 0.1 s less).
  const redis = new (await import('ioredis')).Redis(config.url, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: true, commandTimeout: REDIS_COMMAND_TIMEOUT_MS });
  // ioredis rejects a failed connect with "Connection is closed."; the reason is in the last 'error'.
  let connectError: unknown;
  const remember = (err: unknown) => (connectError = err);
  redis.on('error', remember);
  try {
    await redis.connect();
  } catch (err) {
    redis.disconnect();
    throw redisStartupError(config.url, err, connectError);
  }
  redis.off('error', remember);
  redis.on('error', (err) => logger.warn({ err }, 'redis error'));
  return redis;
}
