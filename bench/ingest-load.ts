// The load generator of the ingest benchmark, run as its own process (so its CPU is not the
// server's): N keep-alive clients POST OTLP protobuf exports of S spans (the real OpenTelemetry
// serializer, realistic GenAI attributes, ~1 KB of messages per LLM span) for D seconds, each
// request with fresh trace ids. Prints one JSON line of figures.
// argv: url spansPerRequest gzip(0|1) clients seconds
import http from 'node:http';
import zlib from 'node:zlib';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { buildSpans } from './otlp-decode.ts';

const [url, spansArg, gzipArg, clientsArg, secondsArg] = process.argv.slice(2);
const SPANS = Number(spansArg);
const GZIP = gzipArg === '1';
const CLIENTS = Number(clientsArg);
const SECONDS = Number(secondsArg);

/**
 * Whole traces (1 agent span, LLM calls with ~1 KB of input messages each, 1 tool call) so no
 * request holds part of a trace: 4-span traces for 100 and 512 spans, two 5-span traces for 10.
 * With 1 span per request a trace's spans go one request each, children first and the root last,
 * from one client (what SimpleSpanProcessor does).
 */
const PER_TRACE = SPANS % 4 === 0 ? [2, 1] : SPANS % 5 === 0 ? [3, 1] : [2, 1];
const ONE_BY_ONE = SPANS < 4;
function template(): { bodies: Buffer[]; traceIds: Buffer[] } {
  const spans = buildSpans(ONE_BY_ONE ? 4 : SPANS, PER_TRACE[0], PER_TRACE[1]);
  const traceIds = [...new Set(spans.map((s) => s.spanContext().traceId))].map((h) => Buffer.from(h, 'hex'));
  const bodies = ONE_BY_ONE
    ? spans.map((s) => Buffer.from(ProtobufTraceSerializer.serializeRequest([s])!))
    : [Buffer.from(ProtobufTraceSerializer.serializeRequest(spans)!)];
  return { bodies, traceIds };
}

/** Where each template trace id sits in a body, so a request gets fresh ids by overwriting bytes. */
function idOffsets(body: Buffer, ids: Buffer[]): number[][] {
  return ids.map((id) => {
    const at: number[] = [];
    for (let i = body.indexOf(id); i !== -1; i = body.indexOf(id, i + 1)) at.push(i);
    return at;
  });
}

const { bodies: templates, traceIds } = template();
const offsets = templates.map((b) => idOffsets(b, traceIds));
let serial = 0;
/** The requests of one unit of work: one request of whole traces, or one trace span by span. */
function nextBodies(): Buffer[] {
  const run = ++serial;
  return templates.map((tpl, k) => {
    const b = Buffer.from(tpl);
    for (let t = 0; t < traceIds.length; t++) {
      const id = Buffer.alloc(16);
      id.writeUInt32BE(process.pid, 0);
      id.writeUInt32BE(run, 4);
      id.writeUInt32BE(t + 1, 8);
      id.writeUInt32BE(0x7a11_0001, 12);
      for (const o of offsets[k]![t]!) id.copy(b, o);
    }
    return GZIP ? zlib.gzipSync(b, { level: 1 }) : b;
  });
}

const agent = new http.Agent({ keepAlive: true, maxSockets: CLIENTS });
function post(body: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url!,
      {
        method: 'POST',
        agent,
        headers: {
          'Content-Type': 'application/x-protobuf',
          'Content-Length': body.length,
          ...(GZIP ? { 'Content-Encoding': 'gzip' } : {}),
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const latencies: number[] = [];
const statuses: Record<number, number> = {};
let spans = 0;
let bytesSent = 0;
const started = performance.now();
const deadline = started + SECONDS * 1000;
await Promise.all(
  Array.from({ length: CLIENTS }, async () => {
    while (performance.now() < deadline) {
      for (const body of nextBodies()) {
        for (;;) {
          const t = performance.now();
          const status = await post(body);
          latencies.push(performance.now() - t);
          statuses[status] = (statuses[status] ?? 0) + 1;
          bytesSent += body.length;
          if (status === 200) {
            spans += ONE_BY_ONE ? 1 : SPANS;
            break;
          }
          await new Promise((r) => setTimeout(r, 200)); // 503: back off and send again, as an exporter would
          if (performance.now() >= deadline) break;
        }
      }
    }
  }),
);
const wallS = (performance.now() - started) / 1000;
latencies.sort((a, b) => a - b);
const q = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? 0;
process.stdout.write(
  `${JSON.stringify({ spans, requests: latencies.length, wallS, spansPerS: spans / wallS, p50: q(0.5), p99: q(0.99), statuses, bytesPerRequest: Math.round(bytesSent / Math.max(1, latencies.length)) })}\n`,
);
agent.destroy();
