// Hand-built DecodedSpans for mapper tests: exact attributes, nothing implied.
import type { Attributes, AttrValue, DecodedEvent, DecodedSpan } from '../../src/executions/span.ts';

let counter = 0;

/** A span with the given attributes (and any other field overridden); ids are unique per call. */
export function span(attributes: Attributes, over: Partial<DecodedSpan> = {}): DecodedSpan {
  counter++;
  return {
    traceId: '5b8efff798038103d269b633813fc60c',
    spanId: counter.toString(16).padStart(16, '0'),
    parentSpanId: '',
    name: 'span',
    kind: 1,
    startTimeNs: 1_700_000_000_000_000_000n,
    endTimeNs: 1_700_000_001_000_000_000n,
    attributes,
    events: [],
    links: [],
    statusCode: 0,
    statusMessage: '',
    resource: { 'service.name': 'svc' },
    scopeName: '',
    scopeVersion: '',
    truncated: [],
    ...over,
  };
}

export function event(name: string, attributes: Record<string, AttrValue> = {}): DecodedEvent {
  return { name, timeNs: 1_700_000_000_500_000_000n, attributes };
}

/** JSON.stringify, for attributes the SDKs send as JSON strings. */
export const json = (v: unknown): string => JSON.stringify(v);
