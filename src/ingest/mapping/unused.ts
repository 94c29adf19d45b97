// For ?explain=true only: every attribute of a namespace the mapper knows that no field was taken
// from, and that no reader already listed, is added to explain.ignored with a reason, so the
// answer accounts for each such key ("used", or "ignored, because"). A key counts as used when a
// mapped source names it (exactly, or through a family such as `llm.input_messages.*`).
import { LIMITS, type SpanCtx } from './context.ts';

const NAMESPACES = ['gen_ai.', 'llm.', 'ai.', 'langfuse.', 'genkit:', 'pydantic_ai.', 'traceloop.', 'flue.', 'openinference.'];

/** Known keys or families that are read by no field, with why (first match wins). */
const REASONS: Array<[string, string]> = [
  ['gen_ai.request.', 'a request parameter: not stored on the execution'],
  ['ai.settings.', 'a request parameter: not stored on the execution'],
  ['llm.invocation_parameters', 'a request parameter: not stored on the execution'],
  ['langfuse.observation.model.parameters', 'a request parameter: not stored on the execution'],
  ['ai.request.headers.', 'request headers: not stored'],
  ['gen_ai.response.', 'response details beside the model: not stored on the execution'],
  ['ai.response.', 'response details: not stored on the execution'],
  ['langfuse.observation.level', "Traceloom takes a span's error from its OTel status (status code ERROR), not from the observation level"],
  ['langfuse.observation.status_message', "Traceloom takes a span's error from its OTel status, not from the observation level"],
  ['langfuse.trace.', 'a Langfuse trace field with no execution column (the execution is named by its agent)'],
  ['langfuse.', 'a Langfuse field with no execution column'],
  ['genkit:', 'a Genkit field with no execution column'],
  ['flue.', 'a Flue field with no execution column'],
];

const SEPARATORS = /[\s,()+]+/;
const TOTAL = /total/i;
const INDEX_PLACEHOLDER = /N\.$/;

function reason(key: string): string {
  if (TOTAL.test(key) && (key.includes('usage') || key.includes('token')))
    return 'a total: the execution stores input and output, not their sum';
  for (const [prefix, why] of REASONS) if (key.startsWith(prefix)) return why;
  return 'in a namespace the mapper knows, but no execution field takes it';
}

function inNamespace(key: string): boolean {
  for (const ns of NAMESPACES) if (key.startsWith(ns)) return true;
  return key === 'final_result';
}

export function explainUnused(ctx: SpanCtx): void {
  const { mapped, ignored } = ctx.explain;
  const accounted = new Set<string>();
  for (const i of ignored) accounted.add(i.key);
  const families: string[] = [];
  for (const source of Object.values(mapped)) {
    for (const token of source.split(SEPARATORS)) {
      if (token.endsWith('.*')) families.push(token.slice(0, -1).replace(INDEX_PLACEHOLDER, ''));
      else if (token) accounted.add(token);
    }
  }
  for (const key in ctx.a) {
    if (!inNamespace(key) || accounted.has(key)) continue;
    if (families.some((f) => key.startsWith(f))) continue;
    if (ignored.length >= LIMITS.ignored) return;
    ignored.push({ key, reason: reason(key) });
  }
}
