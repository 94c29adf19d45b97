// The trace-level attributes a span carries beside its session (fields.ts mapSession): the user it
// ran for, its tags and its metadata, from every convention that sends them. Each found key is
// listed in explain.mapped, each present key that could not be used in explain.ignored, so an
// exporter whose user or tags "do not show" can see why.
//   user:     user.id (OTel, OpenInference) › langfuse.user.id › ai.telemetry.metadata.userId ›
//             traceloop.association.properties.user_id › enduser.id (deprecated OTel)
//   tags:     tag.tags (OpenInference) ∪ langfuse.trace.tags ∪ ai.telemetry.metadata.tags
//             (arrays, JSON arrays, or one string)
//   metadata: metadata (OpenInference, a JSON object) ∪ langfuse.trace.metadata (object) ∪
//             langfuse.trace.metadata.<k> ∪ traceloop.association.properties.<k> ∪
//             ai.telemetry.metadata.<k>, less the keys that name the user, session or tags
// Bounds are those of a direct record (ExecutionCreate): 256 characters for the user, 50 tags of
// 128 characters, 50 metadata keys with values of 2,000 characters (non-strings as JSON).
import { asId, isObj, preview, toText, type SpanCtx } from './context.ts';
import { firstOf } from './fields.ts';
import { METADATA_OBJECT_KEYS, METADATA_PREFIXES, TAG_KEYS, USER_KEYS } from './keys.ts';
import { BOUNDS } from '../../executions/execution-attributes.ts';

export interface TraceAttributes {
  userId: string;
  tags: string[];
  metadata: Record<string, string>;
}

/** Keys of those families that are not metadata: they name the user, the session or the tags. */
const NOT_METADATA = new Set([
  'traceloop.association.properties.user_id',
  'traceloop.association.properties.session_id',
  'ai.telemetry.metadata.userId',
  'ai.telemetry.metadata.sessionId',
  'ai.telemetry.metadata.tags',
]);

const cut = (s: string, max: number) => (s.length > max ? s.slice(0, max) : s);

function userId(ctx: SpanCtx): string {
  const id = firstOf(ctx, 'userId', USER_KEYS, asId, 'a user id');
  if (id.length <= BOUNDS.id) return id;
  ctx.ignore(ctx.explain.mapped.userId ?? 'user id', `longer than ${BOUNDS.id} characters: cut`);
  return cut(id, BOUNDS.id);
}

/** Tags: an array of strings, a JSON array spelled as a string, or one plain string. */
function tags(ctx: SpanCtx): string[] {
  const out: string[] = [];
  const from: string[] = [];
  for (const key of TAG_KEYS) {
    const raw = ctx.a[key];
    if (raw === undefined || raw === null) continue;
    const v = typeof raw === 'string' && raw.trim().startsWith('[') ? ctx.structured(key) : raw;
    const list = Array.isArray(v) ? v : typeof v === 'string' ? [v] : undefined;
    if (!list) {
      ctx.ignore(key, `not a list of tags: ${preview(raw)}`);
      continue;
    }
    let used = false;
    for (const t of list) {
      const tag = typeof t === 'string' ? t.trim() : typeof t === 'number' || typeof t === 'boolean' ? String(t) : undefined;
      if (!tag) {
        if (t !== '') ctx.ignore(key, `a tag that is not text: ${preview(t)}`);
        continue;
      }
      if (out.length >= BOUNDS.tags) {
        ctx.ignore(key, `more than ${BOUNDS.tags} tags: the rest dropped`);
        break;
      }
      const kept = cut(tag, BOUNDS.tag);
      if (!out.includes(kept)) out.push(kept);
      used = true;
    }
    if (used) from.push(key);
  }
  if (from.length) ctx.map('tags', from.join(', '));
  return out;
}

function metadata(ctx: SpanCtx, prefixed: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  const from: string[] = [];
  let full = false;
  const put = (source: string, key: string, value: unknown): boolean => {
    if (key === '' || key === '__proto__' || value === undefined || value === null) return false;
    if (out[key] !== undefined) {
      ctx.ignore(source, `metadata key ${preview(key)} already set by an earlier source`);
      return false;
    }
    if (Object.keys(out).length >= BOUNDS.metadataKeys) {
      if (!full) ctx.ignore(source, `more than ${BOUNDS.metadataKeys} metadata keys: the rest dropped`);
      full = true;
      return false;
    }
    const text = toText(value);
    if (text.length > BOUNDS.metadataValue)
      ctx.ignore(source, `metadata value of ${text.length} characters cut to ${BOUNDS.metadataValue}`);
    out[cut(key, BOUNDS.tag)] = cut(text, BOUNDS.metadataValue);
    return true;
  };
  for (const key of METADATA_OBJECT_KEYS) {
    if (ctx.a[key] === undefined || ctx.a[key] === null) continue;
    const v = ctx.structured(key); // malformed JSON is noted there
    if (!isObj(v)) {
      if (v !== undefined) ctx.ignore(key, `not a JSON object: ${preview(ctx.a[key])}`);
      continue;
    }
    let used = false;
    for (const k in v) used = put(key, k, v[k]) || used;
    if (used) from.push(key);
  }
  const families = new Set<string>();
  for (const key of prefixed) {
    if (NOT_METADATA.has(key)) continue;
    const prefix = METADATA_PREFIXES.find((p) => key.startsWith(p))!;
    if (put(key, key.slice(prefix.length), ctx.a[key])) families.add(`${prefix}*`);
  }
  from.push(...families);
  if (from.length) ctx.map('metadata', from.join(', '));
  return out;
}

export function mapTraceAttributes(ctx: SpanCtx, prefixed: readonly string[]): TraceAttributes {
  return { userId: userId(ctx), tags: tags(ctx), metadata: metadata(ctx, prefixed) };
}
