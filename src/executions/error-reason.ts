// Why a traced execution failed, from its spans: the root span's reason when the root failed with
// one, else that of the earliest failed span (then lowest span id) that has one, so every assembly
// of the same spans, whatever the order they were read in, gives the same reason. A span's reason
// is its mapped error message (status message › exception event › error.type, ingest/mapping),
// else its status message. '' when no failed span says why.

export interface FailedSpanFields {
  span_id: string;
  parent_span_id: string;
  start_time_ns: string;
  status_code: string;
  status_message: string;
  error_message: string;
}

const digits = (s: string) => s || '0';
/** Nanosecond timestamps as stored (decimal text of a UInt64, '' for 0), compared without BigInt. */
function nsBefore(a: string, b: string): boolean {
  const x = digits(a);
  const y = digits(b);
  return x.length !== y.length ? x.length < y.length : x < y;
}

const reasonOf = (s: FailedSpanFields) => (s.status_code === 'ERROR' ? s.error_message || s.status_message : '');

function earlier(a: FailedSpanFields, b: FailedSpanFields | undefined): boolean {
  return !b || nsBefore(a.start_time_ns, b.start_time_ns) || (digits(a.start_time_ns) === digits(b.start_time_ns) && a.span_id < b.span_id);
}

export function errorReason(spans: readonly FailedSpanFields[]): string {
  let root: FailedSpanFields | undefined;
  let first: FailedSpanFields | undefined;
  for (const s of spans) {
    if (!reasonOf(s)) continue;
    if (!s.parent_span_id) {
      if (earlier(s, root)) root = s;
    } else if (earlier(s, first)) first = s;
  }
  const chosen = root ?? first;
  return chosen ? reasonOf(chosen) : '';
}
