// Template usages a span names: traceloom.prompt.{id,version,inputs} (docs/traces.md), semconv
// gen_ai.prompt.{name,version,variable.*}, langfuse.observation.prompt.{name,version}.
//
// OpenInference llm.prompt_template.{template,version,variables} carries a template but no prompt
// id. An id cannot be made up (prompt ids are the user's names; a hash of the template would
// resolve to nothing), so these keys only complete a usage another key on the same span names
// (its version and inputs when those are missing); alone they are listed as ignored.
import type { SpanPromptUsage } from '../../executions/span.ts';
import { asId, isObj, preview, type SpanCtx } from './context.ts';
import type { KeyScan } from './indexed.ts';

function versionRef(v: unknown): string | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : undefined;
  if (typeof v === 'string') return v.trim() || undefined;
  return undefined;
}

/** A JSON object (or an object string); undefined and noted otherwise. */
function inputsObject(ctx: SpanCtx, key: string): Record<string, unknown> | undefined {
  if (ctx.a[key] === undefined || ctx.a[key] === null) return undefined;
  const v = ctx.structured(key); // malformed JSON is noted there
  if (isObj(v)) return v;
  if (v !== undefined) ctx.ignore(key, `not a JSON object: ${preview(ctx.a[key])}`);
  return undefined;
}

function add(list: SpanPromptUsage[], usage: SpanPromptUsage): void {
  const same = list.find((u) => u.promptId === usage.promptId);
  if (!same) {
    list.push(usage);
    return;
  }
  same.versionRef ??= usage.versionRef;
  if (usage.inputs) same.inputs = { ...usage.inputs, ...same.inputs };
}

export function mapPromptUsages(ctx: SpanCtx, scan: KeyScan): SpanPromptUsage[] {
  const a = ctx.a;
  const list: SpanPromptUsage[] = [];
  const sources: string[] = [];

  const tlId = asId(a['traceloom.prompt.id']);
  if (tlId) {
    const u: SpanPromptUsage = { promptId: tlId };
    const ver = versionRef(a['traceloom.prompt.version']);
    if (ver) u.versionRef = ver;
    const inputs = inputsObject(ctx, 'traceloom.prompt.inputs');
    if (inputs) u.inputs = inputs;
    add(list, u);
    sources.push('traceloom.prompt.id');
  } else {
    for (const k of ['traceloom.prompt.id', 'traceloom.prompt.version', 'traceloom.prompt.inputs'])
      if (a[k] !== undefined) ctx.ignore(k, k.endsWith('.id') ? `not a prompt id: ${preview(a[k])}` : 'no traceloom.prompt.id on the span');
  }

  const gaName = asId(a['gen_ai.prompt.name']);
  if (gaName) {
    const u: SpanPromptUsage = { promptId: gaName };
    const ver = versionRef(a['gen_ai.prompt.version']);
    if (ver) u.versionRef = ver;
    if (scan.promptVars) u.inputs = { ...scan.promptVars };
    add(list, u);
    sources.push('gen_ai.prompt.name');
  } else if (a['gen_ai.prompt.version'] !== undefined || scan.promptVars)
    ctx.ignore('gen_ai.prompt.version / gen_ai.prompt.variable.*', 'no gen_ai.prompt.name on the span');

  const lfName = asId(a['langfuse.observation.prompt.name']);
  if (lfName) {
    const u: SpanPromptUsage = { promptId: lfName };
    const ver = versionRef(a['langfuse.observation.prompt.version']);
    if (ver) u.versionRef = ver;
    add(list, u);
    sources.push('langfuse.observation.prompt.name');
  }

  const oiVersion = versionRef(a['llm.prompt_template.version']);
  const oiPresent =
    oiVersion !== undefined || a['llm.prompt_template.variables'] !== undefined || a['llm.prompt_template.template'] !== undefined;
  if (oiPresent) {
    if (list.length === 0)
      ctx.ignore('llm.prompt_template.*', 'OpenInference names no prompt id: set traceloom.prompt.id to link the template');
    else {
      const first = list[0]!;
      const vars = a['llm.prompt_template.variables'] !== undefined ? inputsObject(ctx, 'llm.prompt_template.variables') : undefined;
      if (first.versionRef === undefined && oiVersion !== undefined) first.versionRef = oiVersion;
      if (first.inputs === undefined && vars) first.inputs = vars;
      sources.push('llm.prompt_template.* (version and variables)');
    }
  }
  if (sources.length) ctx.map('promptUsages', sources.join(', '));
  return list;
}
