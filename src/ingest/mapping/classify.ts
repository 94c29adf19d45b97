// Which kind of span this is (docs/otel-mapping.md, "Classifying a span"). Only inference spans
// count usage and cost: agent and outer SDK spans repeat their children's totals.
// The first rule that names the span wins, most explicit dialect marker first:
//   langfuse.observation.type › openinference.span.kind › spring.ai.kind › gen_ai.operation.name ›
//   Vercel ai.* operation id › Genkit subtype/type › Flue span keys › traceloop.span.kind ›
//   llm.request.type › langsmith.span.kind › framework span names › gen_ai.tool.name /
//   gen_ai.tool.call.id › a model attribute › token usage › other.
// The last two rules: a span no dialect classifies is an inference when it names a model or
// carries token counts (LiteLLM and hand-rolled tracers put usage on such spans). Counting it is
// safe for totals: trace assembly counts an inference span only when none of its descendants
// carries usage, so a parent that sums its children never doubles them (span-builders.ts).
import type { SpanClass } from '../../executions/span.ts';
import { asStr, type SpanCtx } from './context.ts';
import { flueClass } from './dialects/flue.ts';
import { genkitClass } from './dialects/genkit.ts';
import { langfuseClass } from './dialects/langfuse.ts';
import { OPENINFERENCE_KINDS } from './dialects/openinference.ts';
import { TRACELOOP_KINDS } from './dialects/openllmetry.ts';
import { GENAI_OPS } from './dialects/otel-genai.ts';
import { vercelClass, vercelOperationName } from './dialects/vercel.ts';
import { G, MODEL_KEYS } from './keys.ts';

export interface Classification {
  spanClass: SpanClass;
  /** gen_ai.operation.name, or the dialect's own operation value ('' when none) */
  operation: string;
}

// Spring AI ChatClient wraps one user call and its model calls, like the AI SDK's outer span.
const SPRING_KINDS: Record<string, SpanClass> = { chat_client: 'agent', tool_call: 'tool', advisor: 'other', vector_store: 'other' };
const LANGSMITH_KINDS: Record<string, SpanClass> = { llm: 'inference', tool: 'tool', chain: 'agent', retriever: 'other' };

function decided(
  ctx: SpanCtx,
  genaiOp: string | undefined,
  spanClass: SpanClass,
  rule: string,
  value: string,
  dialectOp: string,
): Classification {
  ctx.map('spanClass', value ? `${rule} (${value})` : rule);
  const operation = genaiOp ?? dialectOp;
  if (operation) ctx.map('operation', genaiOp ? 'gen_ai.operation.name' : rule);
  return { spanClass, operation };
}

/**
 * `groups`: the key groups the span carries (keys.ts); without CLASS or MODEL keys only the span
 * name can decide. `usageCounts`: the span carries a token count (of any dialect).
 */
export function classify(ctx: SpanCtx, groups: number, usageCounts = false): Classification {
  const a = ctx.a;
  const name = typeof ctx.span.name === 'string' ? ctx.span.name : '';
  const genaiOp = groups & G.CLASS ? asStr(a['gen_ai.operation.name']) : undefined;

  if (groups & G.LANGFUSE) {
    const lf = langfuseClass(ctx);
    if (lf) return decided(ctx, genaiOp, lf[0], 'langfuse.observation.type', lf[1], lf[2]);
  }

  if (groups & G.CLASS) {
    const oiKind = asStr(a['openinference.span.kind'])?.toUpperCase();
    const oiClass = oiKind ? OPENINFERENCE_KINDS[oiKind] : undefined;
    if (oiClass) return decided(ctx, genaiOp, oiClass, 'openinference.span.kind', oiKind!, oiKind!);

    const springKind = asStr(a['spring.ai.kind']);
    const springClass = springKind ? SPRING_KINDS[springKind] : undefined;
    if (springClass) return decided(ctx, genaiOp, springClass, 'spring.ai.kind', springKind!, springKind!);

    if (genaiOp && Object.hasOwn(GENAI_OPS, genaiOp))
      return decided(ctx, genaiOp, GENAI_OPS[genaiOp]!, 'gen_ai.operation.name', genaiOp, genaiOp);
  }

  let vercelId = groups & G.CLASS ? asStr(a['ai.operationId']) : undefined;
  let vercelSource = 'ai.operationId';
  if (vercelId === undefined && groups & G.CLASS) {
    vercelId = vercelOperationName(a['operation.name']);
    vercelSource = 'operation.name';
  }
  if (vercelId === undefined && name.startsWith('ai.')) {
    vercelId = name;
    vercelSource = 'span name';
  }
  const vercel = vercelId ? vercelClass(vercelId) : undefined;
  if (vercel) return decided(ctx, genaiOp, vercel, vercelSource, vercelId!, vercelId!);

  if (groups & G.GENKIT) {
    const gk = genkitClass(ctx);
    if (gk) return decided(ctx, genaiOp, gk[0], gk[1], gk[2], gk[2]);
  }
  if (groups & G.FLUE) {
    const fl = flueClass(ctx);
    if (fl) return decided(ctx, genaiOp, fl[0], fl[1], '', '');
  }

  if (groups & G.CLASS) {
    const tlKind = asStr(a['traceloop.span.kind']);
    const tlClass = tlKind ? TRACELOOP_KINDS[tlKind] : undefined;
    if (tlClass) return decided(ctx, genaiOp, tlClass, 'traceloop.span.kind', tlKind!, tlKind!);

    const tlType = asStr(a['llm.request.type']);
    if (tlType) return decided(ctx, genaiOp, 'inference', 'llm.request.type', tlType, tlType);

    const lsKind = asStr(a['langsmith.span.kind']);
    const lsClass = lsKind ? LANGSMITH_KINDS[lsKind] : undefined;
    if (lsClass) return decided(ctx, genaiOp, lsClass, 'langsmith.span.kind', lsKind!, lsKind!);
  }

  // Pydantic AI instrumentation v2 (`agent run`) and older Google ADK (`agent_run [name]`) name
  // their agent spans only; both carry a model attribute that must not make them inference.
  if (name === 'agent run' || name.startsWith('agent_run')) return decided(ctx, genaiOp, 'agent', 'span name', name, '');

  if (groups & G.CLASS) {
    if (a['gen_ai.tool.name'] !== undefined) return decided(ctx, genaiOp, 'tool', 'gen_ai.tool.name', '', '');
    if (a['gen_ai.tool.call.id'] !== undefined) return decided(ctx, genaiOp, 'tool', 'gen_ai.tool.call.id', '', '');
  }

  if (groups & G.MODEL) {
    for (const key of MODEL_KEYS) {
      if (asStr(a[key])) return decided(ctx, genaiOp, 'inference', key, 'a model on a span that is not agent, tool or chain', '');
    }
  }

  if (usageCounts) return decided(ctx, genaiOp, 'inference', 'token usage', 'a span no dialect classifies carries token counts', '');

  if (genaiOp) {
    ctx.map('operation', 'gen_ai.operation.name');
    ctx.ignore('gen_ai.operation.name', `operation ${genaiOp} is not one this mapper counts, and the span names no model`);
  }
  return { spanClass: 'other', operation: genaiOp ?? '' };
}
