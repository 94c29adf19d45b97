// Cache invalidation across API nodes: a message published on a channel reaches every node's
// handlers (through Redis pub/sub), including the publisher's own, which is served synchronously
// so a write is visible on its node before the response is sent. Without Redis there is one node
// and messages stay in process.
import type { Redis } from 'ioredis';
import type { Logger } from '../logger.ts';
import type { RedisStore } from './redis.ts';

export type BroadcastHandler = (message: string) => void;

export interface Broadcast {
  /** Handle messages of `channel`; `onResync` runs after a reconnect, when messages may have been missed. */
  subscribe(channel: string, handler: BroadcastHandler, onResync?: () => void): void;
  publish(channel: string, message: string): Promise<void>;
  close(): void;
}

export function createBroadcast(redis: RedisStore | undefined, logger: Logger): Broadcast {
  const handlers = new Map<string, Array<{ handler: BroadcastHandler; onResync?: () => void }>>();
  const fullName = (channel: string) => `${redis?.prefix ?? 'traceloom'}:${channel}`;
  let subscriber: Redis | undefined;
  const deliver = (channel: string, message: string) => {
    for (const h of handlers.get(channel) ?? []) h.handler(message);
  };

  if (redis) {
    subscriber = redis.connect({ maxRetriesPerRequest: null });
    subscriber.on('message', (ch: string, message: string) => deliver(ch.slice(redis.prefix.length + 1), message));
    let first = true;
    subscriber.on('ready', () => {
      if (first) {
        first = false;
        return;
      }
      for (const list of handlers.values()) for (const h of list) h.onResync?.();
    });
  }

  return {
    subscribe(channel, handler, onResync) {
      const list = handlers.get(channel) ?? [];
      if (list.length === 0 && subscriber) {
        // Not awaited: a Redis that is down must not stop the boot; ioredis re-subscribes on reconnect.
        subscriber
          .subscribe(fullName(channel))
          .catch((err: Error) =>
            logger.warn({ channel, err: { message: err.message } }, 'broadcast channel unavailable; caches fall back to their TTL'),
          );
      }
      list.push({ handler, onResync });
      handlers.set(channel, list);
    },
    async publish(channel, message) {
      deliver(channel, message); // this node at once
      if (!redis) return;
      try {
        await redis.client.publish(fullName(channel), message);
      } catch (err) {
        logger.warn({ channel, err: { message: (err as Error).message } }, 'broadcast not sent; other nodes fall back to cache TTLs');
      }
    },
    close() {
      subscriber?.disconnect();
    },
  };
}
