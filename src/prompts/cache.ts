// Reads by `latest` or label are served from memory; every write to a prompt drops its entries
// on every node (broadcast), so a new version or a moved label is visible at once. A read that
// raced with a write does not store what it read (generation check), so no stale entry survives.
import type { Broadcast } from '../stores/broadcast.ts';
import type { VersionRow } from './prompt-repository.ts';

const CHANNEL = 'prompt-changed';
const MAX_PROMPTS = 10_000;
/** Bound on staleness if a broadcast is ever missed. */
const TTL_MS = 60_000;

interface Entry {
  generation: number;
  refs: Map<string, { row: VersionRow; at: number }>;
}

export interface PromptCache {
  get(projectId: string, promptId: string, ref: string): VersionRow | undefined;
  /** The generation to hand back to `set`; read it before reading the database. */
  generation(projectId: string, promptId: string): number;
  set(projectId: string, promptId: string, ref: string, row: VersionRow, generation: number): void;
  /** After a committed write to the prompt: drop it here and on every other node. */
  invalidate(projectId: string, promptId: string): Promise<void>;
}

export function createPromptCache(broadcast: Broadcast): PromptCache {
  const entries = new Map<string, Entry>();
  const generations = new Map<string, number>();
  const keyOf = (projectId: string, promptId: string) => `${projectId}\u0000${promptId}`;
  const drop = (key: string) => {
    entries.delete(key);
    generations.set(key, (generations.get(key) ?? 0) + 1);
    if (generations.size > MAX_PROMPTS * 4) generations.clear();
  };
  broadcast.subscribe(CHANNEL, drop, () => entries.clear());

  return {
    get(projectId, promptId, ref) {
      const hit = entries.get(keyOf(projectId, promptId))?.refs.get(ref);
      if (!hit || Date.now() - hit.at > TTL_MS) return undefined;
      return hit.row;
    },
    generation(projectId, promptId) {
      return generations.get(keyOf(projectId, promptId)) ?? 0;
    },
    set(projectId, promptId, ref, row, generation) {
      const key = keyOf(projectId, promptId);
      if ((generations.get(key) ?? 0) !== generation) return; // a write happened meanwhile
      let entry = entries.get(key);
      if (!entry) {
        if (entries.size >= MAX_PROMPTS) entries.delete(entries.keys().next().value as string);
        entry = { generation, refs: new Map() };
        entries.set(key, entry);
      }
      entry.refs.set(ref, { row, at: Date.now() });
    },
    async invalidate(projectId, promptId) {
      await broadcast.publish(CHANNEL, keyOf(projectId, promptId));
    },
  };
}
