// Redis: BullMQ queues, shared caches and cross-node invalidation. Optional: without REDIS_URL
// jobs run in-process and caches are local to the one process.
import { Redis, type RedisOptions } from 'ioredis';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';

export interface RedisStore {
  /** For caches and pub/sub publishing. Commands fail fast while disconnected. */
  readonly client: Redis;
  readonly prefix: string;
  /** A new connection for a blocking consumer (BullMQ workers, subscribers). The caller closes it. */
  connect(extra?: RedisOptions): Redis;
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

export function createRedis(config: Config, logger: Logger): RedisStore | undefined {
  const url = config.redisUrl;
  if (!url) return undefined;
  const timeoutMs = Math.min(config.timeouts.storeMs, 5_000);
  const base: RedisOptions = {
    connectTimeout: timeoutMs,
    lazyConnect: false,
    // Back off up to 2 s between reconnects; never give up (the server may come back).
    retryStrategy: (times) => Math.min(times * 200, 2_000),
  };
  const opened: Redis[] = [];
  const connect = (extra?: RedisOptions): Redis => {
    const r = new Redis(url, { ...base, ...extra });
    r.on('error', (err) => logger.debug({ err: { message: err.message } }, 'redis connection error'));
    opened.push(r);
    return r;
  };
  // Requests must not wait on a Redis that is down: no offline queue, bounded command time.
  const client = connect({ enableOfflineQueue: false, commandTimeout: timeoutMs, maxRetriesPerRequest: 1 });
  return {
    client,
    prefix: config.redisPrefix,
    connect,
    async ping(): Promise<boolean> {
      try {
        // Commands fail at once while disconnected (no offline queue): give a connection that is
        // still being made the chance to come up before calling Redis down.
        if (client.status !== 'ready') {
          await new Promise<void>((resolve) => {
            const t = setTimeout(resolve, timeoutMs);
            t.unref();
            client.once('ready', () => {
              clearTimeout(t);
              resolve();
            });
          });
        }
        return (await client.ping()) === 'PONG';
      } catch {
        return false;
      }
    },
    async close(): Promise<void> {
      await Promise.all(
        opened.map(async (r) => {
          // QUIT on a connection that is down would wait for a reconnect that may never come.
          if (r.status !== 'ready') return r.disconnect();
          const timer = setTimeout(() => r.disconnect(), 2_000);
          try {
            await r.quit();
          } catch {
            r.disconnect();
          } finally {
            clearTimeout(timer);
          }
        }),
      );
    },
  };
}
