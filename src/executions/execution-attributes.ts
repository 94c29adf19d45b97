// The trace-level attributes of a traced execution, from its spans: the root's first, then the
// other spans in start order. user_id and session_id: the first span that names one; tags: every
// span's, in that order, each once (at most 50); metadata: every span's keys, the first span to set
// a key wins (at most 50 keys). The bounds are those of a direct record.
import type { StoredSpan } from './span-rows.ts';

/** The bounds of an execution's user and session ids, tags and metadata (a direct record's; the mapping cuts spans' to them). */
export const BOUNDS = { id: 256, tags: 50, tag: 128, metadataKeys: 50, metadataValue: 2000 };

type AttributeSpan = Pick<StoredSpan, 'span_id' | 'parent_span_id' | 'start_time_ns' | 'session_id' | 'user_id' | 'tags' | 'metadata'>;

export interface ExecutionAttributes {
  user_id: string;
  session_id: string;
  tags: string[];
  metadata: Record<string, string>;
}

const startOf = (s: AttributeSpan) => BigInt(s.start_time_ns || '0');

export function executionAttributes(spans: readonly AttributeSpan[]): ExecutionAttributes {
  const ordered = [...spans].sort((a, b) => {
    const ra = a.parent_span_id ? 1 : 0;
    const rb = b.parent_span_id ? 1 : 0;
    if (ra !== rb) return ra - rb;
    const sa = startOf(a);
    const sb = startOf(b);
    return sa < sb ? -1 : sa > sb ? 1 : a.span_id < b.span_id ? -1 : a.span_id > b.span_id ? 1 : 0;
  });
  const out: ExecutionAttributes = { user_id: '', session_id: '', tags: [], metadata: {} };
  let keys = 0;
  for (const s of ordered) {
    if (!out.user_id && s.user_id) out.user_id = s.user_id;
    if (!out.session_id && s.session_id) out.session_id = s.session_id;
    for (const t of s.tags ?? []) if (out.tags.length < BOUNDS.tags && !out.tags.includes(t)) out.tags.push(t);
    const m = s.metadata ?? {};
    for (const k of Object.keys(m)) {
      if (keys >= BOUNDS.metadataKeys || k === '__proto__' || Object.hasOwn(out.metadata, k)) continue;
      out.metadata[k] = m[k]!;
      keys++;
    }
  }
  return out;
}
