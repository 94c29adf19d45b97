// GenAI events sent as OTLP log records (the form the GenAI conventions define; the official JS
// OpenAI instrumentation and several Python ones put message content only there), turned into the
// span-event form the message mapper already reads (messages.ts sources 1–3): the record's body
// fields become the event's attributes, as SDKs that attach the same events to spans send them.
// The event name comes from the record's `event_name`, else its `event.name` attribute. A record
// that is not such an event, or that names no span to join, is ignored with the reason.
import type { AttrValue, Attributes, DecodedEvent, DecodedSpan, NormalizedMessage } from '../../executions/span.ts';
import type { DecodedLogRecord } from '../otlp/logs.ts';
import { idProblem, setAttr } from '../otlp/validate.ts';
import { asStr, isObj, SpanCtx } from './context.ts';
import { scanKeys } from './indexed.ts';
import { mapMessages } from './messages.ts';

/** The events whose content joins a span's messages. */
export const GENAI_LOG_EVENTS = new Set([
  'gen_ai.client.inference.operation.details',
  'gen_ai.system.message',
  'gen_ai.user.message',
  'gen_ai.assistant.message',
  'gen_ai.tool.message',
  'gen_ai.choice',
  'gen_ai.content.prompt',
  'gen_ai.content.completion',
]);

export type LogEventMapping =
  | { kind: 'mapped'; eventName: string; event: DecodedEvent; messages: { input: number; output: number } }
  | { kind: 'ignored'; eventName: string; reason: string };

/** The event name of a record: `event_name` (OTLP 1.5+), else the `event.name` attribute older SDKs set. */
export function eventNameOf(rec: DecodedLogRecord): string {
  return rec.eventName || asStr(rec.attributes['event.name']) || '';
}

/** A record's content in span-event form: the attributes, with the body's fields (a map) or the body itself as `content`. */
export function eventAttributes(name: string, rec: DecodedLogRecord): Attributes {
  const out: Attributes = {};
  const body = rec.body;
  if (isObj(body)) for (const k of Object.keys(body)) setAttr(out, k, (body as Record<string, AttrValue>)[k]!);
  else if (body !== null && body !== undefined) {
    // gen_ai.content.* events carry gen_ai.prompt / gen_ai.completion; the per-message ones `content`.
    const key = name === 'gen_ai.content.prompt' ? 'gen_ai.prompt' : name === 'gen_ai.content.completion' ? 'gen_ai.completion' : 'content';
    out[key] = body;
  }
  for (const k of Object.keys(rec.attributes)) if (k !== 'event.name') setAttr(out, k, rec.attributes[k]!);
  return out;
}

export function mapLogRecord(rec: DecodedLogRecord): LogEventMapping {
  const eventName = eventNameOf(rec);
  if (!eventName)
    return { kind: 'ignored', eventName, reason: 'not an event (no event_name, no event.name attribute): plain logs are not kept' };
  if (!GENAI_LOG_EVENTS.has(eventName)) {
    return {
      kind: 'ignored',
      eventName,
      reason: eventName.startsWith('gen_ai.') ? `${eventName} carries no message content: not kept` : `not a GenAI event: not kept`,
    };
  }
  const problem = idProblem(rec.traceId, rec.spanId, '');
  if (problem !== undefined) return { kind: 'ignored', eventName, reason: `cannot be joined to a span (${problem})` };
  const event: DecodedEvent = { name: eventName, timeNs: rec.timeNs || rec.observedTimeNs, attributes: eventAttributes(eventName, rec) };
  const m = messagesFromEvents([event]);
  return { kind: 'mapped', eventName, event, messages: { input: m.input.length, output: m.output.length } };
}

const NO_SPAN: Omit<DecodedSpan, 'events'> = {
  traceId: '',
  spanId: '',
  parentSpanId: '',
  name: '',
  kind: 0,
  startTimeNs: 0n,
  endTimeNs: 0n,
  attributes: {},
  links: [],
  statusCode: 0,
  statusMessage: '',
  resource: {},
  scopeName: '',
  scopeVersion: '',
  truncated: [],
};

/** The messages a span's GenAI log events hold, read like span events (in the order given). */
export function messagesFromEvents(events: DecodedEvent[]): { input: NormalizedMessage[]; output: NormalizedMessage[] } {
  const ctx = new SpanCtx({ ...NO_SPAN, events });
  return mapMessages(ctx, scanKeys(ctx), 'inference');
}
