// The GenAI conventions' evaluation event (`gen_ai.evaluation.result`): the outcome of judging a
// generative-AI call, sent as a span event or as an OTLP log record. It becomes a score (source
// `otel`; docs/scores.md, "Scores from OpenTelemetry") on the span it is attached to or parented
// by, or, without span context, on the span that carries its `gen_ai.response.id`.
import type { Attributes } from '../../executions/span.ts';
import { asStr } from './context.ts';

export const EVALUATION_EVENT = 'gen_ai.evaluation.result';

/** An evaluation as the event says it (structured-cloneable: it crosses from encoding workers). */
export interface Evaluation {
  traceId: string;
  spanId: string;
  /** `gen_ai.response.id`: joins an event without span context to its span. */
  responseId: string;
  name: string;
  value?: number;
  label?: string;
  explanation?: string;
  /** The event's time (ns, as text): with the span and the name, what makes a resent event the same score. */
  timeNs: string;
}

/** The evaluation an event's attributes hold, or the reason they hold none. */
export function evaluationOf(
  attributes: Attributes,
  at: { traceId: string; spanId: string; timeNs: bigint },
): { evaluation: Evaluation } | { reason: string } {
  const name = asStr(attributes['gen_ai.evaluation.name']);
  if (!name) return { reason: `${EVALUATION_EVENT} without gen_ai.evaluation.name` };
  if (name.length > 200) return { reason: 'gen_ai.evaluation.name: longer than 200 characters' };
  const raw = attributes['gen_ai.evaluation.score.value'];
  const value = typeof raw === 'number' ? raw : typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : undefined;
  if (value !== undefined && !Number.isFinite(value))
    return { reason: `gen_ai.evaluation.score.value: not a finite number (${String(raw)})` };
  const label = asStr(attributes['gen_ai.evaluation.score.label'])?.slice(0, 200);
  if (value === undefined && label === undefined)
    return { reason: `${EVALUATION_EVENT} ${name}: neither gen_ai.evaluation.score.value nor gen_ai.evaluation.score.label` };
  return {
    evaluation: {
      traceId: at.traceId,
      spanId: at.spanId,
      responseId: asStr(attributes['gen_ai.response.id']) ?? '',
      name,
      ...(value !== undefined ? { value } : {}),
      ...(label !== undefined ? { label } : {}),
      ...(asStr(attributes['gen_ai.evaluation.explanation'])
        ? { explanation: asStr(attributes['gen_ai.evaluation.explanation'])!.slice(0, 4000) }
        : {}),
      timeNs: at.timeNs.toString(),
    },
  };
}
