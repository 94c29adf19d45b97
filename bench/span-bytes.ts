// Bytes on disk per span and per execution (docs/capacity.md): OTLP GenAI traces posted to the API
// (embedded stores) the way an instrumented agent sends them, stored and assembled, then every
// table's parts merged (OPTIMIZE … FINAL: the steady state of a day's partition) and measured
// from system.parts. Message content is real prose, not a repeated template: sentences of the
// README files under node_modules, drawn at random per message, so compression sees text as
// varied as conversations (a template copied a million times would compress to nothing).
// A trace: an agent span, BENCH_SPAN_BYTES_LLM chat spans (default 2) with input messages of
// ~1.2 KB (system prompt, the user's question, a tool call and its answer) and output messages
// of ~300 B, and one tool span. BENCH_SPAN_BYTES_SPANS spans in all (default 100,000).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { ROOT_CONTEXT, SpanKind, trace } from '@opentelemetry/api';
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/logger.ts';
import { startService } from '../src/service.ts';
import { removeDataDir } from './data-dir.ts';
import { formatCount, waitUntil } from './timing.ts';

/** Sentences of real English (package READMEs), 40 to 300 characters, code and markup left out. */
function sentences(): string[] {
  const out: string[] = [];
  const root = path.resolve('node_modules');
  for (const pkg of fs.readdirSync(root)) {
    const dirs = pkg.startsWith('@') ? fs.readdirSync(path.join(root, pkg)).map((p) => path.join(pkg, p)) : [pkg];
    for (const d of dirs) {
      const file = path.join(root, d, 'README.md');
      if (!fs.existsSync(file)) continue;
      const text = fs.readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, ' ');
      for (const s of text.split(/(?<=[.!?])\s+/)) {
        const t = s
          .replace(/[#*`>|[\]()_]/g, ' ')
          .replace(/\s+/g, ' ')
          .trim();
        if (t.length >= 40 && t.length <= 300 && /^[A-Z]/.test(t) && !/https?:/.test(t)) out.push(t);
      }
      if (out.length > 50_000) return out;
    }
  }
  return out;
}

export async function benchSpanBytes(): Promise<Array<{ what: string; value: string }>> {
  const totalSpans = Number(process.env.BENCH_SPAN_BYTES_SPANS ?? 100_000);
  const llmCalls = Number(process.env.BENCH_SPAN_BYTES_LLM ?? 2);
  const perTrace = llmCalls + 2;
  const corpus = sentences();
  let seed = 42;
  const rnd = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  const pick = () => corpus[Math.floor(rnd() * corpus.length)]!;
  const prose = (bytes: number) => {
    let s = '';
    while (s.length < bytes) s += `${pick()} `;
    return s.trim();
  };
  const models = ['gpt-4o', 'gpt-4o-mini', 'claude-sonnet-4', 'gemini-2.5-flash'];

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'traceloom-bench-span-bytes-'));
  const config = loadConfig({
    DATA_DIR: dir,
    PORT: '0',
    OTLP_GRPC_PORT: '0',
    AUTH_REQUIRED: 'false',
    LOG_LEVEL: 'warn',
    DATABASE_URL: '',
    REDIS_URL: '',
  });
  const svc = await startService(config, { logger: createLogger({ logLevel: 'warn' }) });
  const ch = svc.stores.clickhouse;
  const figures: Array<{ what: string; value: string }> = [];
  try {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': 'support-agent', 'deployment.environment.name': 'production' }),
      spanProcessors: [new SimpleSpanProcessor(exporter)],
    });
    const tracer = provider.getTracer('@traceloom/bench-span-bytes', '1.0.0');
    const traces = Math.ceil(totalSpans / perTrace);
    let t = 1_768_000_000;
    let posted = 0;
    let requestBytes = 0;
    const send = async () => {
      const spans = exporter.getFinishedSpans();
      if (spans.length === 0) return;
      const body = Buffer.from(ProtobufTraceSerializer.serializeRequest(spans)!);
      exporter.reset();
      requestBytes += body.length;
      for (;;) {
        const res = await fetch(`${svc.url}/api/v1/traces`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-protobuf' },
          body,
        });
        await res.arrayBuffer();
        if (res.ok) break;
        if (res.status !== 503) throw new Error(`POST /api/v1/traces: ${res.status}`);
        await new Promise((r) => setTimeout(r, 500));
      }
      posted += spans.length;
    };
    for (let i = 0; i < traces; i++) {
      const user = `u-${Math.floor(rnd() * 1000)}`;
      const agent = tracer.startSpan('invoke_agent support', {
        kind: SpanKind.INTERNAL,
        startTime: [t, 0],
        attributes: {
          'gen_ai.operation.name': 'invoke_agent',
          'gen_ai.agent.name': 'support',
          'session.id': `s-${Math.floor(i / 5)}`,
          'user.id': user,
        },
      });
      const ctx = trace.setSpan(ROOT_CONTEXT, agent);
      const question = prose(600);
      for (let k = 0; k < llmCalls; k++) {
        const model = models[Math.floor(rnd() * models.length)]!;
        const input = JSON.stringify([
          {
            role: 'system',
            parts: [{ type: 'text', content: 'You are a helpful support agent for an online shop. Be concise and confirm order numbers.' }],
          },
          { role: 'user', parts: [{ type: 'text', content: question }] },
          {
            role: 'assistant',
            parts: [{ type: 'tool_call', id: `call_${k}`, name: 'lookup_order', arguments: { order_id: String(10_000 + i) } }],
          },
          { role: 'tool', parts: [{ type: 'tool_call_response', id: `call_${k}`, response: { status: 'delivered', note: prose(200) } }] },
        ]);
        const output = JSON.stringify([{ role: 'assistant', parts: [{ type: 'text', content: prose(300) }], finish_reason: 'stop' }]);
        const llm = tracer.startSpan(
          `chat ${model}`,
          {
            kind: SpanKind.CLIENT,
            startTime: [t, 1_000_000 + k * 100_000_000],
            attributes: {
              'gen_ai.operation.name': 'chat',
              'gen_ai.provider.name': model.startsWith('gpt') ? 'openai' : model.startsWith('claude') ? 'anthropic' : 'gcp.gemini',
              'gen_ai.request.model': model,
              'gen_ai.response.model': model,
              'gen_ai.usage.input_tokens': 300 + Math.floor(rnd() * 900),
              'gen_ai.usage.output_tokens': 20 + Math.floor(rnd() * 200),
              'gen_ai.response.finish_reasons': ['stop'],
              'gen_ai.response.id': `chatcmpl-${i}-${k}`,
              'gen_ai.input.messages': input,
              'gen_ai.output.messages': output,
            },
          },
          ctx,
        );
        llm.end([t, 95_000_000 + k * 100_000_000]);
      }
      const tool = tracer.startSpan(
        'execute_tool lookup_order',
        {
          kind: SpanKind.INTERNAL,
          startTime: [t, 500_000_000],
          attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'lookup_order', 'gen_ai.tool.call.id': 'call_0' },
        },
        ctx,
      );
      tool.end([t, 600_000_000]);
      agent.end([t + 1, 0]);
      t += 3;
      if ((i + 1) % 128 === 0) await send();
    }
    await send();
    const count = async (sql: string) => Number((await ch.query<{ n: string }>(sql))[0]?.n ?? 0);
    const stored = await waitUntil(
      async () =>
        (await count("SELECT sum(sign) AS n FROM executions WHERE project_id = 'default'")) >= traces &&
        (await count("SELECT count() AS n FROM spans WHERE project_id = 'default'")) >= posted,
      300_000,
      500,
    );
    if (!stored) throw new Error('the traces were not all stored and assembled within 5 minutes');
    const tables = await ch.query<{ name: string }>(
      "SELECT name FROM system.tables WHERE database = currentDatabase() AND engine LIKE '%MergeTree' AND total_rows > 0",
    );
    for (const { name } of tables) await ch.command(`OPTIMIZE TABLE ${name} FINAL`);
    const parts = await ch.query<{ table: string; bytes: string; rows: string; raw: string }>(
      `SELECT table, toString(sum(bytes_on_disk)) AS bytes, toString(sum(rows)) AS rows, toString(sum(data_uncompressed_bytes)) AS raw
       FROM system.parts WHERE active AND database = currentDatabase() GROUP BY table ORDER BY sum(bytes_on_disk) DESC`,
    );
    const all = parts.reduce((s, p) => s + Number(p.bytes), 0);
    const spansRow = parts.find((p) => p.table === 'spans');
    figures.push({ what: 'spans posted; traces (executions)', value: `${formatCount(posted)}; ${formatCount(traces)}` });
    figures.push({ what: 'OTLP protobuf bytes per span, as posted (uncompressed)', value: (requestBytes / posted).toFixed(0) });
    figures.push({
      what: 'bytes on disk per span: spans table (uncompressed → on disk)',
      value: `${(Number(spansRow?.raw ?? 0) / posted).toFixed(0)} → ${(Number(spansRow?.bytes ?? 0) / posted).toFixed(0)}`,
    });
    figures.push({ what: 'bytes on disk per span, every table', value: (all / posted).toFixed(0) });
    figures.push({ what: 'bytes on disk per execution, every table', value: (all / traces).toFixed(0) });
    for (const p of parts.slice(0, 12))
      figures.push({
        what: `bytes on disk per execution: ${p.table}`,
        value: `${(Number(p.bytes) / traces).toFixed(1)} (${formatCount(Number(p.rows))} rows)`,
      });
  } finally {
    await svc.close();
    removeDataDir(dir);
  }
  return figures;
}
