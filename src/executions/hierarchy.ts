// The span tree of an execution. A direct record has no spans: it is shown as one synthetic root
// that carries the execution's own figures, so every execution has a tree.
import type { presentDetail } from './present.ts';

type Detail = ReturnType<typeof presentDetail>;

const ns = (iso: string) => (BigInt(Date.parse(iso)) * 1_000_000n).toString();

export function syntheticRoot(e: Detail) {
  return {
    span_id: `direct-${e.trace_id}`,
    parent_span_id: null,
    name: e.agent_id ? `${e.agent_id} execution` : 'execution',
    kind: 'INTERNAL',
    start_time: e.started_at,
    end_time: e.ended_at,
    start_time_ns: ns(e.started_at),
    end_time_ns: ns(e.ended_at),
    duration_ms: Date.parse(e.ended_at) - Date.parse(e.started_at),
    status_code: e.status === 'error' ? 'ERROR' : 'OK',
    status_message: e.error_message,
    operation: 'chat',
    model: e.model || null,
    provider: e.provider || null,
    tokens_in: e.tokens_in,
    tokens_out: e.tokens_out,
    cost_usd: e.cost_usd,
    attributes: {},
    events: [],
    children: [],
    synthetic: true,
  };
}

export interface TreeSpan {
  span_id: string;
  parent_span_id: string;
  name: string;
  kind: string;
  start_time_ns: string;
  end_time_ns: string;
  status_code: string;
  status_message: string;
  span_class: string;
  operation: string;
  model: string;
  provider: string;
  tokens_in: number;
  tokens_out: number;
  has_usage: boolean;
  /** whether this span's usage counts in the execution (an inference span with no usage below it) */
  counted: boolean;
  cost_usd: number | null;
  cost_source: 'computed' | 'provided' | 'unpriced' | null;
  attributes: unknown;
  resource: unknown;
  events: unknown[];
  links: unknown[];
  /** The span's messages as normalised at ingest (inference spans), and a tool span's arguments and result */
  messages: unknown;
  truncated: string[];
}

const isoOfNs = (ns: string) => new Date(Number(BigInt(ns) / 1_000_000n)).toISOString();

/** The span tree: children in start order; a span whose parent was never received is a root with `orphan: true`. */
export function spanTree(spans: readonly TreeSpan[]) {
  const ids = new Set(spans.map((s) => s.span_id));
  const nodes = new Map(
    spans.map((s) => {
      const start = BigInt(s.start_time_ns);
      const end = BigInt(s.end_time_ns);
      const node = {
        span_id: s.span_id,
        parent_span_id: s.parent_span_id || null,
        name: s.name,
        kind: s.kind,
        start_time: isoOfNs(s.start_time_ns),
        end_time: isoOfNs(s.end_time_ns),
        start_time_ns: s.start_time_ns,
        end_time_ns: s.end_time_ns,
        duration_ms: end >= start ? Number((end - start) / 1_000n) / 1_000 : 0,
        status_code: s.status_code,
        status_message: s.status_message || null,
        span_class: s.span_class,
        operation: s.operation || null,
        model: s.model || null,
        provider: s.provider || null,
        tokens_in: s.has_usage ? s.tokens_in : null,
        tokens_out: s.has_usage ? s.tokens_out : null,
        usage_counted: s.counted,
        cost_usd: s.cost_usd,
        cost_source: s.cost_source,
        attributes: s.attributes,
        resource: s.resource,
        events: s.events,
        links: s.links,
        ...(s.messages ? { messages: s.messages } : {}),
        ...(s.truncated.length ? { truncated: s.truncated } : {}),
        ...(s.parent_span_id && !ids.has(s.parent_span_id) ? { orphan: true } : {}),
        children: [] as unknown[],
      };
      return [s.span_id, node] as const;
    }),
  );
  const roots: unknown[] = [];
  // children in start order; spans that started in the same instant (clocks with millisecond
  // precision) by their end, then by id, so the order is the same on every read.
  const cmp = (x: bigint, y: bigint) => (x < y ? -1 : x > y ? 1 : 0);
  const byStart = [...spans].sort(
    (a, b) =>
      cmp(BigInt(a.start_time_ns), BigInt(b.start_time_ns)) ||
      cmp(BigInt(a.end_time_ns), BigInt(b.end_time_ns)) ||
      a.span_id.localeCompare(b.span_id),
  );
  // Parent links as sent, less those that would close a cycle (a span naming its descendant as
  // parent): such a span becomes a root marked orphan, so the tree is always a tree. One pass that
  // colours spans (walking, done) keeps this linear whatever the depth.
  const parentOf = new Map(spans.filter((s) => s.parent_span_id && ids.has(s.parent_span_id)).map((s) => [s.span_id, s.parent_span_id]));
  const state = new Map<string, 'walking' | 'done'>();
  for (const s of byStart) {
    const path: string[] = [];
    let id: string | undefined = s.span_id;
    while (id !== undefined && state.get(id) !== 'done') {
      if (state.get(id) === 'walking') {
        // `id` closes a cycle: cut the link of the span that points into it.
        const cut = path[path.length - 1]!;
        parentOf.delete(cut);
        Object.assign(nodes.get(cut)!, { orphan: true });
        break;
      }
      state.set(id, 'walking');
      path.push(id);
      id = parentOf.get(id);
    }
    for (const p of path) state.set(p, 'done');
  }
  for (const s of byStart) {
    const node = nodes.get(s.span_id)!;
    const parentId = parentOf.get(s.span_id);
    const parent = parentId !== undefined ? nodes.get(parentId) : undefined;
    if (parent) parent.children.push(node);
    else roots.push(node);
  }
  return roots;
}
