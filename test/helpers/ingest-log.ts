// Records appended straight to a stopped service's ingest log, as an earlier version (one without
// the start window) wrote them: how a poison record already in a log is made for tests and benches.
import type { Config } from '../../src/config.ts';
import type { RowEncoder } from '../../src/stores/row-binary.ts';
import { WriteAheadLog } from '../../src/stores/write-ahead-log.ts';
import { traceFlags, type IngestRecordHeader } from '../../src/ingest/span-loader.ts';
import { decodeTraceBody, encodeSpans } from '../../src/ingest/span-encoding.ts';
import { toClickHouseTime } from '../../src/time.ts';

/** Each JSON export of `bodies` as one record of project `projectId`, encoded with no start window. */
export async function appendToIngestLog(config: Config, encoder: RowEncoder, projectId: string, bodies: string[]): Promise<void> {
  const c = config.ingest;
  const log = new WriteAheadLog<IngestRecordHeader>(
    c.logDir,
    { segmentBytes: c.logSegmentBytes, maxPendingBytes: c.logMaxBytes, maxPendingRows: c.logMaxRows, maxMemoryBytes: 0 },
    (h) => h.n,
  );
  log.open();
  try {
    for (const b of bodies) {
      const e = encodeSpans(projectId, decodeTraceBody({ format: 'json', body: Buffer.from(b) }), encoder, toClickHouseTime(new Date()));
      await log.append(
        { p: projectId, n: e.rows, t: e.traceIds, f: traceFlags(e), c: e.columns },
        Buffer.from(e.payload.buffer, e.payload.byteOffset, e.payload.byteLength),
      );
    }
  } finally {
    await log.close();
  }
}

const hex = (n: number, v: number) => v.toString(16).padStart(n, '0');

/** A trace: a root agent span and a chat span of gpt-4o with usage (100 in, 10 out), starting at `startNs`. */
export function agentTrace(t: number, startNs = BigInt(Date.now()) * 1_000_000n, name = 'chat gpt-4o'): object[] {
  return [
    {
      trace_id: hex(32, t),
      span_id: hex(16, t * 2 + 1),
      span_name: 'agent',
      attributes: { 'gen_ai.operation.name': 'invoke_agent' },
      start_time_ns: String(startNs),
      end_time_ns: String(startNs + 5_000_000n),
    },
    chatSpan(t, t * 2 + 2, startNs + 1_000n, startNs + 4_000_000n, { name }),
  ];
}

/** A gpt-4o chat call (OpenAI) under the agent span of `agentTrace(t)`: span id `spanId`, tokens in and out, more attributes. */
export function chatSpan(
  t: number,
  spanId: number,
  startNs: bigint,
  endNs: bigint,
  opts: { name?: string; tokensIn?: number; tokensOut?: number; attributes?: Record<string, unknown> } = {},
): object {
  return {
    trace_id: hex(32, t),
    span_id: hex(16, spanId),
    parent_span_id: hex(16, t * 2 + 1),
    span_name: opts.name ?? 'chat gpt-4o',
    span_kind: 'CLIENT',
    attributes: {
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'gpt-4o',
      'gen_ai.provider.name': 'openai',
      'gen_ai.usage.input_tokens': opts.tokensIn ?? 100,
      'gen_ai.usage.output_tokens': opts.tokensOut ?? 10,
      ...opts.attributes,
    },
    start_time_ns: String(startNs),
    end_time_ns: String(endNs),
  };
}

/** One trace of 1,001 spans, on the first of each month from January 1970: more months than one insert may hold. */
export function spreadOverMonths(t: number): string {
  const spans = Array.from({ length: 1_001 }, (_x, i) => {
    const startNs = BigInt(Date.UTC(1970, i, 1)) * 1_000_000n;
    return {
      trace_id: hex(32, t),
      span_id: hex(16, i + 1),
      span_name: `step ${i}`,
      start_time_ns: String(startNs),
      end_time_ns: String(startNs + 1_000_000n),
    };
  });
  return JSON.stringify({ spans });
}
