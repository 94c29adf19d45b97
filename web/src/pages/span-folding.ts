// Which spans of a span tree the waterfall shows (waterfall.tsx): a big tree opens folded below
// the depth that keeps it short (initiallyCollapsed), and a span with a wide fan-out shows its
// first children and a "Show N more spans" row until asked for the rest (visibleRows).
import type { HierarchySpan } from '../types.ts';

export interface Row {
  span: HierarchySpan;
  depth: number;
}

/** The rest of a wide span's children, shown as one row until revealed. */
export interface MoreRow {
  /** The span whose children they are ('' for the trace's roots). */
  parentId: string;
  parentName: string;
  depth: number;
  hidden: number;
  /** The first span it stands for: where the keyboard's focus goes once they are shown. */
  firstHidden: string;
}

export function flatten(spans: HierarchySpan[], depth = 0, out: Row[] = []): Row[] {
  for (const span of spans) {
    out.push({ span, depth });
    flatten(span.children, depth + 1, out);
  }
  return out;
}

/** A tree of at most this many spans opens whole; a bigger one opens as deep as stays within it. */
export const OPEN_SPANS = 40;
/** In a tree bigger than OPEN_SPANS, a span with more children than this shows only FANOUT_SHOWN of them at first. */
export const FANOUT_MAX = 25;
export const FANOUT_SHOWN = 20;

/**
 * The spans folded when the tree opens: none for a small tree; else the roots' children are shown,
 * then each further level while the rows shown stay within OPEN_SPANS, and the spans of the first
 * level that would go beyond start folded (with all below them).
 */
export function initiallyCollapsed(spans: HierarchySpan[]): Set<string> {
  const collapsed = new Set<string>();
  const rows = flatten(spans);
  if (rows.length <= OPEN_SPANS) return collapsed;
  let level = spans;
  let shown = spans.length;
  for (let depth = 0; level.length > 0; depth++) {
    const next = level.flatMap((s) => s.children);
    if (depth > 0 && shown + next.length > OPEN_SPANS) {
      for (const r of rows) if (r.depth >= depth && r.span.children.length > 0) collapsed.add(r.span.span_id);
      break;
    }
    shown += next.length;
    level = next;
  }
  return collapsed;
}

/**
 * The ids of the spans ('' for the roots) whose children are cut to FANOUT_SHOWN until revealed:
 * those with more than FANOUT_MAX, in a tree bigger than OPEN_SPANS (a small tree opens whole).
 */
export function wideParents(spans: HierarchySpan[], all: Row[] = flatten(spans)): string[] {
  if (all.length <= OPEN_SPANS) return [];
  return [...(spans.length > FANOUT_MAX ? [''] : []), ...all.filter((r) => r.span.children.length > FANOUT_MAX).map((r) => r.span.span_id)];
}

/**
 * The rows shown, in the tree's order: every span whose ancestors are all unfolded, but of a wide
 * span not revealed, only its first FANOUT_SHOWN children (with what is shown below them), then
 * one row for the rest.
 */
export function visibleRows(
  spans: HierarchySpan[],
  collapsed: Set<string>,
  wide: Set<string>,
  revealed: Set<string>,
): Array<Row | MoreRow> {
  const out: Array<Row | MoreRow> = [];
  const walk = (children: HierarchySpan[], depth: number, parentId: string, parentName: string) => {
    const cut = wide.has(parentId) && !revealed.has(parentId) ? FANOUT_SHOWN : children.length;
    for (const span of children.slice(0, cut)) {
      out.push({ span, depth });
      if (!collapsed.has(span.span_id)) walk(span.children, depth + 1, span.span_id, span.name);
    }
    if (cut < children.length)
      out.push({ parentId, parentName, depth, hidden: children.length - cut, firstHidden: children[cut]!.span_id });
  };
  walk(spans, 0, '', 'the trace');
  return out;
}
