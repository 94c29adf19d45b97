// Verifying an API key on every request without a database round trip each time, while a
// revocation takes effect on the next request: rows are cached by key hash for a few seconds
// (unknown keys too, against brute-force load), revocation evicts locally at once and, with
// Redis, on every other node through pub/sub; the short TTL bounds any missed message.
// `last_used_at` is written in batches, not once per request.
import type { Logger } from '../logger.ts';
import type { PostgresStore } from '../stores/postgres.ts';
import type { Broadcast } from '../stores/broadcast.ts';
import { findKeyByHash, hashApiKey, KEY_PATTERN, touchKeys, type VerifiedKeyRow } from './api-key-repository.ts';

export const KEY_CACHE_TTL_MS = 5_000;
const KEY_CACHE_MAX = 100_000;
const USAGE_FLUSH_MS = 30_000;

export type KeyRejection = 'malformed' | 'unknown' | 'revoked' | 'expired';

export type KeyVerification = { ok: true; row: VerifiedKeyRow } | { ok: false; reason: KeyRejection; keyId?: string };

export interface KeyVerifier {
  verify(key: string): Promise<KeyVerification>;
  /** Called after a key is revoked: no cache on any node may keep it. */
  evict(keyHash: string): Promise<void>;
  flushUsage(): Promise<void>;
  close(): Promise<void>;
}

const REVOKED_CHANNEL = 'api-key-revoked';

export function createKeyVerifier(postgres: PostgresStore, broadcast: Broadcast, logger: Logger): KeyVerifier {
  const cache = new Map<string, { row: VerifiedKeyRow | undefined; at: number }>();
  const used = new Set<string>();
  broadcast.subscribe(
    REVOKED_CHANNEL,
    (keyHash) => cache.delete(keyHash),
    () => cache.clear(),
  );

  const flushUsage = async () => {
    if (used.size === 0) return;
    const ids = [...used];
    used.clear();
    try {
      await touchKeys(postgres, ids);
    } catch (err) {
      for (const id of ids) used.add(id);
      logger.warn({ err: { message: (err as Error).message } }, 'could not record key usage; will retry');
    }
  };
  const timer = setInterval(() => void flushUsage(), USAGE_FLUSH_MS);
  timer.unref();

  return {
    async verify(key: string): Promise<KeyVerification> {
      if (!KEY_PATTERN.test(key)) return { ok: false, reason: 'malformed' };
      const keyHash = hashApiKey(key);
      const now = Date.now();
      let entry = cache.get(keyHash);
      if (!entry || now - entry.at > KEY_CACHE_TTL_MS) {
        entry = { row: await findKeyByHash(postgres, keyHash), at: now };
        if (cache.size >= KEY_CACHE_MAX) cache.delete(cache.keys().next().value as string);
        cache.set(keyHash, entry);
      }
      const row = entry.row;
      if (!row) return { ok: false, reason: 'unknown' };
      if (row.revoked_at) return { ok: false, reason: 'revoked', keyId: row.key_id };
      // Expiry is evaluated at request time, not when the row was cached.
      if (row.expires_at.getTime() <= now) return { ok: false, reason: 'expired', keyId: row.key_id };
      used.add(row.key_id);
      return { ok: true, row };
    },
    async evict(keyHash: string): Promise<void> {
      // Evicted here synchronously; other nodes through Redis, or within KEY_CACHE_TTL_MS at worst.
      await broadcast.publish(REVOKED_CHANNEL, keyHash);
    },
    flushUsage,
    async close(): Promise<void> {
      clearInterval(timer);
      await flushUsage().catch(() => undefined);
    },
  };
}
