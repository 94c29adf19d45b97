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
