// The span tree (GET .../hierarchy) as a waterfall: one row per span, indented by depth, with a bar
// placed by its start and duration in the trace (exact nanosecond times). A click shows the span.
import { useMemo, useState } from 'preact/hooks';
import { duration, int, text, usd } from '../format.ts';
import type { HierarchySpan } from '../types.ts';
import { Badge, Card, Load, useApi } from '../ui.tsx';

interface Row {
  span: HierarchySpan;
  depth: number;
}

export function flatten(spans: HierarchySpan[], depth = 0, out: Row[] = []): Row[] {
  for (const span of spans) {
    out.push({ span, depth });
    flatten(span.children, depth + 1, out);
  }
  return out;
}

export function Waterfall({ path }: { path: string }) {
  const tree = useApi<{ trace_id: string; spans: HierarchySpan[] }>(path);
  return (
    <Card title="Span tree">
      <Load state={tree} label="Loading the spans…">
        {(t) => <Rows spans={t.spans} />}
      </Load>
    </Card>
  );
}

function Rows({ spans }: { spans: HierarchySpan[] }) {
  const rows = useMemo(() => flatten(spans), [spans]);
  const [selected, setSelected] = useState<string | undefined>();
  if (rows.length === 0) return <p class="muted">No spans.</p>;
  const start = rows.reduce(
    (m, r) => (BigInt(r.span.start_time_ns) < m ? BigInt(r.span.start_time_ns) : m),
    BigInt(rows[0]!.span.start_time_ns),
  );
  const end = rows.reduce((m, r) => (BigInt(r.span.end_time_ns) > m ? BigInt(r.span.end_time_ns) : m), 0n);
  const total = Number(end - start) || 1;
  const at = (ns: string) => (Number(BigInt(ns) - start) / total) * 100;
  const chosen = rows.find((r) => r.span.span_id === selected)?.span;
  return (
    <>
      <div class="waterfall" role="table" aria-label="Spans">
        <div class="wf-row wf-head" role="row">
          <span role="columnheader">Span</span>
          <span role="columnheader">0 — {duration(total / 1e6)}</span>
        </div>
        {rows.map(({ span, depth }) => {
          const left = at(span.start_time_ns);
          const width = Math.max(at(span.end_time_ns) - left, 0.4);
          // The label goes after the bar, or before it when the bar ends near the right edge, or
          // inside it when it spans nearly the whole track.
          const labelAt =
            left + width < 70
              ? { inside: false, style: { left: `${left + width}%` } }
              : left > 30
                ? { inside: false, style: { right: `${100 - left}%` } }
                : { inside: true, style: { left: `${left}%` } };
          return (
            <div
              role="row"
              class={`wf-row ${selected === span.span_id ? 'selected' : ''} ${span.status_code === 'ERROR' ? 'is-error' : ''}`}
              data-span-name={span.name}
              onClick={() => setSelected(selected === span.span_id ? undefined : span.span_id)}
            >
              <span role="cell" class="wf-name" style={{ paddingLeft: `${depth * 16 + 4}px` }} title={span.name}>
                <Badge kind={`class-${span.span_class ?? 'other'}`}>{span.span_class ?? 'span'}</Badge> {span.name}
                {span.orphan && <Badge kind="warn">orphan</Badge>}
              </span>
              <span role="cell" class="wf-track">
                <span class={`wf-bar class-${span.span_class ?? 'other'}`} style={{ left: `${left}%`, width: `${width}%` }} />
                <span class={`wf-label ${labelAt.inside ? 'inside' : ''}`} style={labelAt.style}>
                  {duration(span.duration_ms)}
                  {span.tokens_in !== null && span.tokens_in !== undefined ? ` · ${int(span.tokens_in)}→${int(span.tokens_out)} tok` : ''}
                  {span.usage_counted && span.cost_usd !== null && span.cost_usd !== undefined ? ` · ${usd(span.cost_usd)}` : ''}
                </span>
              </span>
            </div>
          );
        })}
      </div>
      {chosen && <SpanDetail span={chosen} />}
    </>
  );
}

function SpanDetail({ span }: { span: HierarchySpan }) {
  return (
    <div class="span-detail">
      <h3>{span.name}</h3>
      <dl class="facts">
        <dt>Span id</dt>
        <dd class="mono">{span.span_id}</dd>
        <dt>Kind / status</dt>
        <dd>
          {span.kind ?? '—'} / {span.status_code ?? '—'} {span.status_message}
        </dd>
        <dt>Model</dt>
        <dd>
          {span.provider ?? '—'} / {span.model ?? '—'}
        </dd>
        <dt>Usage</dt>
        <dd>
          {span.tokens_in ?? '—'} in, {span.tokens_out ?? '—'} out;{' '}
          {span.usage_counted ? 'counted in the execution' : 'not counted (a descendant carries it, or not an inference span)'}
        </dd>
        <dt>Cost</dt>
        <dd>
          {usd(span.cost_usd)} {span.cost_source ?? ''}
        </dd>
      </dl>
      {span.messages && Object.keys(span.messages).length > 0 && (
        <>
          <h4>Messages</h4>
          <pre>{text(span.messages)}</pre>
        </>
      )}
      <h4>Attributes</h4>
      <pre>{text(span.attributes ?? {})}</pre>
    </div>
  );
}
