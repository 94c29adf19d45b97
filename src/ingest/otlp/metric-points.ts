// OTLP metrics are accepted and not stored (docs/traces.md, "Logs and metrics"): SDKs configured
// with OTEL_EXPORTER_OTLP_ENDPOINT export them beside traces, and a 404 makes them log errors
// forever. The request is still read and checked, so a body that is not a metrics request is a
// 400 and the response can say how many data points were ignored. Field numbers:
// opentelemetry.proto.metrics.v1 (ResourceMetrics 2 scope_metrics; ScopeMetrics 2 metrics; Metric
// 5 gauge, 7 sum, 9 histogram, 10 exponential_histogram, 11 summary; each 1 data_points).
import { badRequest } from '../../errors.ts';
import { WireReader } from './proto-wire.ts';
import { decodeOrRefuse } from './proto-attributes.ts';
import { isObj, pick } from './json-attributes.ts';

const DATA_FIELDS = new Set([5, 7, 9, 10, 11]);

class MetricPointCounter extends WireReader {
  points = 0;

  /** Walks `path` (field numbers of nested messages) and counts the innermost field's occurrences. */
  count(end: number, path: readonly number[][]): void {
    const r = this.r;
    const [here, ...below] = path;
    while (r.pos < end) {
      const tag = r.uint32();
      if ((tag & 7) === 2 && here!.includes(tag >>> 3)) {
        const stop = this.sub(end);
        if (below.length === 0) {
          this.points++;
          r.pos = stop;
        } else {
          this.count(stop, below);
          this.done(stop);
        }
      } else this.skip(tag, end);
    }
  }
}

export function countProtobufMetricPoints(body: Uint8Array): number {
  const buf = Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  const c = new MetricPointCounter(buf);
  // resource_metrics (1) → scope_metrics (2) → metrics (2) → a data field → data_points (1)
  decodeOrRefuse('ExportMetricsServiceRequest', () => c.count(buf.length, [[1], [2], [2], [...DATA_FIELDS], [1]]));
  return c.points;
}

const EXPECTED = 'Request body must be an OTLP/JSON ExportMetricsServiceRequest ({"resourceMetrics":[...]})';
const DATA_KEYS = ['gauge', 'sum', 'histogram', 'exponentialHistogram', 'exponential_histogram', 'summary'];

export function countJsonMetricPoints(doc: unknown): number {
  if (!isObj(doc)) throw badRequest(EXPECTED);
  const resourceMetrics = pick(doc, 'resourceMetrics', 'resource_metrics');
  if (resourceMetrics === undefined || resourceMetrics === null) {
    if (Object.keys(doc).length > 0) throw badRequest(EXPECTED);
    return 0;
  }
  const list = (v: unknown, at: string): unknown[] => {
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v)) throw badRequest(`${at}: must be an array`);
    return v;
  };
  let points = 0;
  list(resourceMetrics, 'resourceMetrics').forEach((rm, i) => {
    if (!isObj(rm)) throw badRequest(`resourceMetrics[${i}]: must be an object`);
    list(pick(rm, 'scopeMetrics', 'scope_metrics'), `resourceMetrics[${i}].scopeMetrics`).forEach((sm, j) => {
      if (!isObj(sm)) throw badRequest(`resourceMetrics[${i}].scopeMetrics[${j}]: must be an object`);
      for (const m of list(sm.metrics, `resourceMetrics[${i}].scopeMetrics[${j}].metrics`)) {
        if (!isObj(m)) continue;
        for (const key of DATA_KEYS) {
          const data = m[key];
          if (isObj(data)) points += list(pick(data, 'dataPoints', 'data_points'), `${key}.dataPoints`).length;
        }
      }
    });
  });
  return points;
}
