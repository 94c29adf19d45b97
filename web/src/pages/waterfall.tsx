// The span tree (GET .../hierarchy) as a waterfall: one row per span, indented by depth, with a bar
// placed by its start and duration in the trace (exact nanosecond times). A span with children
// folds; a big tree starts folded below the depth that keeps it short, and a span with a wide
// fan-out shows its first children and a "Show N more spans" row (span-folding.ts), so a trace of
// hundreds of spans opens as a page, not a scroll. A click on a row shows the span under it: its
// status and reason, its messages rendered, its attributes with JSON folded.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { duration, int, usd } from '../format.ts';
import type { HierarchySpan } from '../types.ts';
import { Badge, Card, Load, Time, useApi } from '../ui.tsx';
import { JsonBlock, MessageView, Value, type ChatMessage } from './rendered.tsx';
import { flatten, initiallyCollapsed, visibleRows, wideParents, type MoreRow, type Row } from './span-folding.ts';

function descendants(span: HierarchySpan): number {
  return span.children.reduce((n, c) => n + 1 + descendants(c), 0);
}

export function Waterfall({ path }: { path: string }) {
  const tree = useApi<{ trace_id: string; spans: HierarchySpan[] }>(path);
  return (
    <Load state={tree} label="Loading the spans…">
      {(t) => <Tree spans={t.spans} />}
    </Load>
  );
}

function Tree({ spans }: { spans: HierarchySpan[] }) {
  const all = useMemo(() => flatten(spans), [spans]);
  const wide = useMemo(() => new Set(wideParents(spans, all)), [spans, all]);
  const [collapsed, setCollapsed] = useState(() => initiallyCollapsed(spans));
  // The wide spans whose children are all shown ("Show N more spans", or Expand all).
  const [revealed, setRevealed] = useState<Set<string>>(() => new Set());
  const [selected, setSelected] = useState<string | undefined>();
  const parents = all.filter((r) => r.span.children.length > 0);
  const toggle = (id: string) =>
    setCollapsed((c) => {
      const next = new Set(c);
      if (!next.delete(id)) next.add(id);
      return next;
    });
  // The span the keyboard's focus moves to once it is drawn: the first of those a "Show more" revealed.
  const [focusSpan, setFocusSpan] = useState<string | undefined>();
  const reveal = (id: string, first: string) => {
    setRevealed((r) => new Set(r).add(id));
    setFocusSpan(first);
  };
  const whole = collapsed.size === 0 && [...wide].every((id) => revealed.has(id));
  return (
    <Card
      title={`Span tree (${all.length})`}
      class="span-tree"
      actions={
        (parents.length > 0 || wide.size > 0) && (
          <>
            <button
              type="button"
              data-action="expand-all"
              onClick={() => {
                setCollapsed(new Set());
                setRevealed(new Set(wide));
              }}
              disabled={whole}
            >
              Expand all
            </button>
            {parents.length > 0 && (
              <button
                type="button"
                data-action="collapse-all"
                onClick={() => {
                  setCollapsed(new Set(parents.map((r) => r.span.span_id)));
                  setRevealed(new Set());
                }}
                disabled={collapsed.size === parents.length && revealed.size === 0}
              >
                Collapse all
              </button>
            )}
          </>
        )
      }
    >
      <Rows
        all={all}
        shown={visibleRows(spans, collapsed, wide, revealed)}
        collapsed={collapsed}
        toggle={toggle}
        reveal={reveal}
        selected={selected}
        select={setSelected}
        focusSpan={focusSpan}
        focused={() => setFocusSpan(undefined)}
      />
    </Card>
  );
}

function Rows({
  all,
  shown,
  collapsed,
  toggle,
  reveal,
  selected,
  select,
  focusSpan,
  focused,
}: {
  all: Row[];
  shown: Array<Row | MoreRow>;
  collapsed: Set<string>;
  toggle(id: string): void;
  reveal(parentId: string, firstHidden: string): void;
  selected: string | undefined;
  select(id: string | undefined): void;
  focusSpan: string | undefined;
  focused(): void;
}) {
  const table = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!focusSpan) return;
    table.current?.querySelector<HTMLElement>(`.wf-row[data-span-id="${CSS.escape(focusSpan)}"]`)?.focus();
    focused();
  }, [focusSpan]);
  if (all.length === 0) return <p class="muted">No spans.</p>;
  const start = all.reduce(
    (m, r) => (BigInt(r.span.start_time_ns) < m ? BigInt(r.span.start_time_ns) : m),
    BigInt(all[0]!.span.start_time_ns),
  );
  const end = all.reduce((m, r) => (BigInt(r.span.end_time_ns) > m ? BigInt(r.span.end_time_ns) : m), 0n);
  const total = Number(end - start) || 1;
  const at = (ns: string) => (Number(BigInt(ns) - start) / total) * 100;
  return (
    <div class="waterfall" role="table" aria-label="Spans" ref={table}>
      <div class="wf-row wf-head" role="row">
        <span role="columnheader">Span</span>
        <span role="columnheader">0 — {duration(total / 1e6)}</span>
      </div>
      {shown.map((row) => {
        if (!('span' in row)) return <MoreSpans row={row} reveal={reveal} />;
        const { span, depth } = row;
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
        const folded = collapsed.has(span.span_id);
        const isSelected = selected === span.span_id;
        return (
          <>
            <div
              role="row"
              class={`wf-row ${isSelected ? 'selected' : ''} ${span.status_code === 'ERROR' ? 'is-error' : ''}`}
              data-span-name={span.name}
              data-span-id={span.span_id}
              data-depth={depth}
              aria-selected={isSelected}
              // Reached with Tab and opened with Enter or Space, as with a click.
              tabIndex={0}
              onClick={() => select(isSelected ? undefined : span.span_id)}
              onKeyDown={(e) => {
                if (e.target !== e.currentTarget || (e.key !== 'Enter' && e.key !== ' ')) return;
                e.preventDefault();
                select(isSelected ? undefined : span.span_id);
              }}
            >
              <span role="cell" class="wf-name" style={{ paddingLeft: `${depth * 16 + 4}px` }} title={span.name}>
                {span.children.length > 0 ? (
                  <button
                    type="button"
                    class="wf-toggle"
                    aria-expanded={!folded}
                    aria-label={`${folded ? 'Expand' : 'Collapse'} ${span.name}`}
                    onClick={(e) => {
                      e.stopPropagation();
                      toggle(span.span_id);
                    }}
                  >
                    {folded ? '▸' : '▾'}
                  </button>
                ) : (
                  <span class="wf-toggle-space" />
                )}
                <Badge kind={`class-${span.span_class ?? 'other'}`}>{span.span_class ?? 'span'}</Badge> {span.name}
                {folded && (
                  <span class="muted small" data-hidden-spans={descendants(span)}>
                    {' '}
                    +{descendants(span)}
                  </span>
                )}
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
            {isSelected && <SpanDetail span={span} />}
          </>
        );
      })}
    </div>
  );
}

/** The row standing for the rest of a wide span's children: a button that shows them. */
function MoreSpans({ row, reveal }: { row: MoreRow; reveal(parentId: string, firstHidden: string): void }) {
  const label = `Show ${row.hidden} more span${row.hidden === 1 ? '' : 's'}`;
  return (
    <div role="row" class="wf-row wf-more" data-more-spans={row.hidden}>
      <span role="cell" class="wf-name" style={{ paddingLeft: `${row.depth * 16 + 4}px` }}>
        <span class="wf-toggle-space" />
        <button
          type="button"
          class="link"
          data-action="show-more-spans"
          aria-label={`${label} of ${row.parentName}`}
          onClick={() => reveal(row.parentId, row.firstHidden)}
        >
          {label}
        </button>
      </span>
      <span role="cell" class="wf-track" />
    </div>
  );
}

/** The `messages` of a span as ingest normalised them (inference and tool spans). */
interface SpanMessages {
  input?: ChatMessage[];
  output?: ChatMessage[];
  tool_arguments?: unknown;
  tool_result?: unknown;
}

function SpanDetail({ span }: { span: HierarchySpan }) {
  const messages = (span.messages ?? {}) as SpanMessages;
  const attributes = Object.entries(span.attributes ?? {}).sort(([a], [b]) => a.localeCompare(b));
  return (
    <div class="span-detail" role="row" data-span-id={span.span_id}>
      <h3>{span.name}</h3>
      <dl class="facts">
        <dt>Status</dt>
        <dd>
          <Badge kind={span.status_code === 'ERROR' ? 'bad' : span.status_code === 'OK' ? 'ok' : ''}>{span.status_code ?? '—'}</Badge>{' '}
          {span.status_message && <span class={span.status_code === 'ERROR' ? 'error-text' : ''}>{span.status_message}</span>}
        </dd>
        <dt>Started</dt>
        <dd>
          <Time iso={span.start_time} /> · {duration(span.duration_ms)}
        </dd>
        <dt>Span id</dt>
        <dd class="mono">{span.span_id}</dd>
        <dt>Kind</dt>
        <dd>{span.kind ?? '—'}</dd>
        {(span.model || span.provider) && (
          <>
            <dt>Model</dt>
            <dd>
              {span.provider ?? '—'} / {span.model ?? '—'}
            </dd>
          </>
        )}
        {span.tokens_in !== null && span.tokens_in !== undefined && (
          <>
            <dt>Usage</dt>
            <dd>
              {int(span.tokens_in)} in, {int(span.tokens_out)} out;{' '}
              {span.usage_counted ? 'counted in the execution' : 'not counted (a descendant carries it, or not an inference span)'}
            </dd>
          </>
        )}
        {span.cost_usd !== null && span.cost_usd !== undefined && (
          <>
            <dt>Cost</dt>
            <dd>
              {usd(span.cost_usd)} {span.cost_source ?? ''}
            </dd>
          </>
        )}
      </dl>
      {(messages.input?.length ?? 0) > 0 && (
        <>
          <h4>Input messages</h4>
          <div class="span-messages">
            {messages.input!.map((m) => (
              <MessageView m={m} />
            ))}
          </div>
        </>
      )}
      {(messages.output?.length ?? 0) > 0 && (
        <>
          <h4>Output messages</h4>
          <div class="span-messages">
            {messages.output!.map((m) => (
              <MessageView m={m} />
            ))}
          </div>
        </>
      )}
      {messages.tool_arguments !== undefined && (
        <>
          <h4>Tool arguments</h4>
          <Value value={messages.tool_arguments} label="arguments" />
        </>
      )}
      {messages.tool_result !== undefined && (
        <>
          <h4>Tool result</h4>
          <Value value={messages.tool_result} label="result" />
        </>
      )}
      <h4>Attributes ({attributes.length})</h4>
      {attributes.length === 0 ? (
        <p class="muted">None.</p>
      ) : (
        <dl class="facts attributes">
          {attributes.map(([k, v]) => (
            <>
              <dt class="mono">{k}</dt>
              <dd data-attribute={k}>
                <Value value={v} label={k} />
              </dd>
            </>
          ))}
        </dl>
      )}
      {span.resource && Object.keys(span.resource).length > 0 && <JsonBlock value={span.resource} label="Resource" open={false} />}
      {span.events && span.events.length > 0 && <JsonBlock value={span.events} label={`Events (${span.events.length})`} open={false} />}
    </div>
  );
}
