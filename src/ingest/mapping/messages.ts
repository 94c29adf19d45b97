// The messages a span sent (input, system instructions first) and received (output), from the
// first source that yields any, per side, in the order of docs/otel-mapping.md:
//   1 gen_ai.system_instructions / gen_ai.input.messages / gen_ai.output.messages (attributes,
//     else the gen_ai.client.inference.operation.details event)
//   2 v1.28–v1.36 per-message events (gen_ai.{system,user,assistant,tool}.message, gen_ai.choice)
//   3 gen_ai.content.prompt / .completion events (gen_ai.prompt / gen_ai.completion; also as
//     span attributes, as Spring AI and LangSmith send them)
//   4 AI SDK ai.prompt.messages (else ai.prompt) + ai.response.text / .toolCalls / .object
//   5 OpenInference llm.input_messages.N.* / llm.output_messages.N.*
//   6 Traceloop gen_ai.prompt.N.* / gen_ai.completion.N.*
//   7 Google ADK gcp.vertex.agent.llm_request / llm_response (vendor JSON; not in the design's
//     list, which would leave ADK without messages: placed after the conventions, before 8)
//   8 input.value / output.value (not on tool spans: there they are the tool's arguments/result)
// Before 1: langfuse.observation.input/output (the Langfuse SDK's explicit payloads) and Pydantic
// AI's pydantic_ai.all_messages / final_result (agent spans); between 4 and 5: Genkit
// genkit:input/output (model actions) and Flue flue.turn.input/output (dialects/).
// Lower sources present on the span are listed in explain.ignored as superseded.
import type { AttrValue, DecodedEvent, NormalizedMessage, SpanClass } from '../../executions/span.ts';
import { isObj, MALFORMED, parseLoose, parseStructured, preview, type SpanCtx } from './context.ts';
import { rebuildIndexed, type KeyScan } from './indexed.ts';
import { normalizeMessage, normalizeMessages, partsText } from './normalize.ts';
import { valueInput, valueOutput } from './dialects/openinference.ts';
import { vercelPrompt, vercelResponse } from './dialects/vercel.ts';
import { adkRequest, adkResponse } from './dialects/adk.ts';
import { FLUE_IN, FLUE_OUT, flueMessages } from './dialects/flue.ts';
import { genkitMessages } from './dialects/genkit.ts';
import { LF_INPUT, LF_OUTPUT, langfuseMessages } from './dialects/langfuse.ts';
import { PYDANTIC_MESSAGES, PYDANTIC_RESULT, pydanticInput, pydanticOutput } from './dialects/pydantic-ai.ts';

const DETAILS = 'gen_ai.client.inference.operation.details';
const PER_MESSAGE_ROLES: Record<string, string> = {
  'gen_ai.system.message': 'system',
  'gen_ai.user.message': 'user',
  'gen_ai.assistant.message': 'assistant',
  'gen_ai.tool.message': 'tool',
};

interface EventScan {
  details: DecodedEvent[];
  perMessage: DecodedEvent[];
  choices: DecodedEvent[];
  prompt?: AttrValue;
  completion?: AttrValue;
}

function scanEvents(events: readonly DecodedEvent[]): EventScan {
  const s: EventScan = { details: [], perMessage: [], choices: [] };
  for (const e of events) {
    if (!e || !isObj(e.attributes)) continue;
    const name = e.name;
    if (name === DETAILS) s.details.push(e);
    else if (name === 'gen_ai.choice') s.choices.push(e);
    else if (PER_MESSAGE_ROLES[name] !== undefined) s.perMessage.push(e);
    else if (name === 'gen_ai.content.prompt') s.prompt ??= e.attributes['gen_ai.prompt'];
    else if (name === 'gen_ai.content.completion') s.completion ??= e.attributes['gen_ai.completion'];
  }
  return s;
}

type Msgs = NormalizedMessage[];
interface Sides {
  input?: Msgs;
  output?: Msgs;
  /** where the messages came from, when more precise than the source's label */
  inFrom?: string;
  outFrom?: string;
}
interface Source {
  label: [string, string];
  hasIn(ctx: SpanCtx, ev: EventScan, scan: KeyScan): boolean;
  hasOut(ctx: SpanCtx, ev: EventScan, scan: KeyScan): boolean;
  read(ctx: SpanCtx, ev: EventScan, scan: KeyScan, want: Sides): Sides;
}

/** A semconv content key from the span, else from the first details event that carries it; `from` collects where. */
function semconvValue(ctx: SpanCtx, ev: EventScan, key: string, from: string[]): unknown {
  if (ctx.a[key] !== undefined) {
    from.push(key);
    return ctx.structured(key);
  }
  for (const e of ev.details) {
    const raw = e.attributes[key];
    if (raw === undefined) continue;
    const v = parseStructured(raw);
    if (v !== MALFORMED) {
      from.push(`${DETAILS} event (${key})`);
      return v;
    }
    ctx.ignore(`${DETAILS} event: ${key}`, `malformed JSON: ${preview(raw)}`);
  }
  return undefined;
}

function systemMessages(v: unknown, out: Msgs): void {
  if (Array.isArray(v) && v.some((x) => isObj(x) && x['role'] !== undefined)) normalizeMessages(v, 'system', out);
  else {
    const text = partsText(v);
    if (text !== null) out.push({ role: 'system', content: text });
  }
}

const semconv: Source = {
  label: ['gen_ai.input.messages', 'gen_ai.output.messages'],
  hasIn: (ctx, ev) => ctx.has('gen_ai.input.messages') || ctx.has('gen_ai.system_instructions') || ev.details.length > 0,
  hasOut: (ctx, ev) => ctx.has('gen_ai.output.messages') || ev.details.length > 0,
  read(ctx, ev, _scan, want) {
    const r: Sides = {};
    if (want.input) {
      const input: Msgs = [];
      const from: string[] = [];
      systemMessages(semconvValue(ctx, ev, 'gen_ai.system_instructions', from), input);
      const sys = input.length;
      normalizeMessages(semconvValue(ctx, ev, 'gen_ai.input.messages', from), 'user', input);
      r.inFrom = from.join(' + ');
      // instructions also sent as the first input message: keep one
      if (sys === 1 && input.length > 1 && input[1]!.role === 'system' && input[1]!.content === input[0]!.content) input.splice(1, 1);
      r.input = input;
    }
    if (want.output) {
      const from: string[] = [];
      r.output = normalizeMessages(semconvValue(ctx, ev, 'gen_ai.output.messages', from), 'assistant');
      r.outFrom = from.join(' + ');
    }
    return r;
  },
};

/** A per-message event's fields as a message (content often a JSON string; Strands sends Bedrock blocks). */
function eventMessage(attrs: Record<string, AttrValue>, role: string, out: Msgs): void {
  const raw: Record<string, unknown> = { role: attrs['role'] ?? role, content: attrs['content'] ?? null };
  if (attrs['tool_calls'] !== undefined) raw['tool_calls'] = attrs['tool_calls'];
  if (attrs['id'] !== undefined) raw['id'] = attrs['id'];
  if (attrs['name'] !== undefined) raw['name'] = attrs['name'];
  normalizeMessage(raw, role, out);
}

function choiceMessage(attrs: Record<string, AttrValue>, out: Msgs): void {
  let message: unknown = attrs['message'];
  if (typeof message === 'string') message = parseLoose(message) ?? message;
  let raw: Record<string, unknown>;
  if (isObj(message) && (message['content'] !== undefined || message['role'] !== undefined || message['tool_calls'] !== undefined))
    raw = { ...message };
  else raw = { role: 'assistant', content: message ?? null };
  if (raw['tool_calls'] === undefined && attrs['tool_calls'] !== undefined) raw['tool_calls'] = attrs['tool_calls'];
  normalizeMessage(raw, 'assistant', out);
}

const perMessage: Source = {
  label: ['gen_ai.{system,user,assistant,tool}.message events', 'gen_ai.choice events'],
  hasIn: (_c, ev) => ev.perMessage.length > 0,
  hasOut: (_c, ev) => ev.choices.length > 0,
  read(_ctx, ev, _scan, want) {
    const r: Sides = {};
    if (want.input) {
      r.input = [];
      for (const e of ev.perMessage) eventMessage(e.attributes, PER_MESSAGE_ROLES[e.name]!, r.input);
    }
    if (want.output) {
      r.output = [];
      const order = (e: DecodedEvent): number =>
        typeof e.attributes['index'] === 'number' ? e.attributes['index'] : Number(e.attributes['index'] ?? 0) || 0;
      for (const e of [...ev.choices].sort((x, y) => order(x) - order(y))) choiceMessage(e.attributes, r.output);
    }
    return r;
  },
};

/** gen_ai.prompt / gen_ai.completion: OpenAI-format JSON, `{messages:[...]}`, or plain text. */
function legacyContent(v: unknown, role: string): Msgs {
  if (typeof v === 'string') {
    const parsed = parseLoose(v);
    return parsed === undefined ? [{ role, content: v }] : normalizeMessages(parsed, role);
  }
  return normalizeMessages(v, role);
}

const contentEvents: Source = {
  label: ['gen_ai.prompt', 'gen_ai.completion'],
  hasIn: (ctx, ev) => ev.prompt !== undefined || ctx.has('gen_ai.prompt'),
  hasOut: (ctx, ev) => ev.completion !== undefined || ctx.has('gen_ai.completion'),
  read(ctx, ev, _scan, want) {
    const r: Sides = {};
    if (want.input) r.input = legacyContent(ev.prompt ?? ctx.a['gen_ai.prompt'], 'user');
    if (want.output) r.output = legacyContent(ev.completion ?? ctx.a['gen_ai.completion'], 'assistant');
    return r;
  },
};

const vercel: Source = {
  label: ['ai.prompt.messages', 'ai.response.text / ai.response.toolCalls'],
  hasIn: (ctx) => ctx.has('ai.prompt.messages') || ctx.has('ai.prompt'),
  hasOut: (ctx) =>
    ctx.has('ai.response.text') ||
    ctx.has('ai.response.toolCalls') ||
    ctx.has('ai.response.object') ||
    ctx.has('ai.result.text') ||
    ctx.has('ai.result.toolCalls') ||
    ctx.has('ai.result.object'),
  read: (ctx, _ev, _scan, want) => ({
    input: want.input ? vercelPrompt(ctx) : undefined,
    output: want.output ? vercelResponse(ctx) : undefined,
  }),
};

/** A dialect that flattens messages into indexed keys (`<prefix>.N.*`), gathered by the attribute scan. */
function indexedSource(label: [string, string], inside: 'oiIn' | 'tlIn', outside: 'oiOut' | 'tlOut'): Source {
  return {
    label,
    hasIn: (_c, _e, scan) => scan[inside] !== undefined,
    hasOut: (_c, _e, scan) => scan[outside] !== undefined,
    read: (_c, _e, scan, want) => ({
      input: want.input && scan[inside] ? rebuildIndexed(scan[inside], 'user') : undefined,
      output: want.output && scan[outside] ? rebuildIndexed(scan[outside], 'assistant') : undefined,
    }),
  };
}

const openInference = indexedSource(['llm.input_messages.*', 'llm.output_messages.*'], 'oiIn', 'oiOut');
const traceloop = indexedSource(['gen_ai.prompt.N.*', 'gen_ai.completion.N.*'], 'tlIn', 'tlOut');

const adk: Source = {
  label: ['gcp.vertex.agent.llm_request', 'gcp.vertex.agent.llm_response'],
  hasIn: (ctx) => ctx.has('gcp.vertex.agent.llm_request'),
  hasOut: (ctx) => ctx.has('gcp.vertex.agent.llm_response'),
  read: (ctx, _e, _s, want) => ({
    input: want.input ? adkRequest(ctx) : undefined,
    output: want.output ? adkResponse(ctx) : undefined,
  }),
};

const values: Source = {
  label: ['input.value', 'output.value'],
  hasIn: (ctx) => ctx.has('input.value'),
  hasOut: (ctx) => ctx.has('output.value'),
  read: (ctx, _e, _s, want) => ({ input: want.input ? valueInput(ctx) : undefined, output: want.output ? valueOutput(ctx) : undefined }),
};

const langfuse: Source = {
  label: [LF_INPUT, LF_OUTPUT],
  hasIn: (ctx) => ctx.has(LF_INPUT),
  hasOut: (ctx) => ctx.has(LF_OUTPUT),
  read: (ctx, _e, _s, want) => ({
    input: want.input ? langfuseMessages(ctx, LF_INPUT, 'user') : undefined,
    output: want.output ? langfuseMessages(ctx, LF_OUTPUT, 'assistant') : undefined,
  }),
};

const pydantic: Source = {
  label: [PYDANTIC_MESSAGES, PYDANTIC_RESULT],
  hasIn: (ctx) => ctx.has(PYDANTIC_MESSAGES),
  hasOut: (ctx) => ctx.has(PYDANTIC_RESULT),
  read(ctx, _e, _s, want) {
    const r: Sides = {};
    if (want.input) {
      const { messages, from } = pydanticInput(ctx);
      r.input = messages;
      r.inFrom = from;
    }
    if (want.output) r.output = pydanticOutput(ctx);
    return r;
  },
};

const genkit: Source = {
  label: ['genkit:input', 'genkit:output'],
  hasIn: (ctx) => ctx.has('genkit:input'),
  hasOut: (ctx) => ctx.has('genkit:output'),
  read: (ctx, _e, _s, want) => ({
    input: want.input ? genkitMessages(ctx, 'input') : undefined,
    output: want.output ? genkitMessages(ctx, 'output') : undefined,
  }),
};

const flue: Source = {
  label: [FLUE_IN, FLUE_OUT],
  hasIn: (ctx) => ctx.has(FLUE_IN),
  hasOut: (ctx) => ctx.has(FLUE_OUT),
  read: (ctx, _e, _s, want) => ({
    input: want.input ? flueMessages(ctx, 'input') : undefined,
    output: want.output ? flueMessages(ctx, 'output') : undefined,
  }),
};

// Explicit dialect payloads first (Langfuse's observation input/output, Pydantic AI's whole
// conversation on its agent span); then the conventions, then framework payloads.
const SOURCES: Source[] = [
  langfuse,
  pydantic,
  semconv,
  perMessage,
  contentEvents,
  vercel,
  genkit,
  flue,
  openInference,
  traceloop,
  adk,
  values,
];
/** On a tool span these carry the tool's arguments and result (fields.ts), not messages. */
const TOOL_SOURCES: Source[] = SOURCES.filter((s) => s !== langfuse && s !== genkit && s !== values);

export function mapMessages(ctx: SpanCtx, scan: KeyScan, spanClass: SpanClass): { input: Msgs; output: Msgs } {
  const ev = scanEvents(Array.isArray(ctx.span.events) ? ctx.span.events : []);
  const sources = spanClass === 'tool' ? TOOL_SOURCES : SOURCES;
  let input: Msgs | undefined;
  let output: Msgs | undefined;
  let inLabel = '';
  let outLabel = '';
  for (const src of sources) {
    const presentIn = src.hasIn(ctx, ev, scan);
    const presentOut = src.hasOut(ctx, ev, scan);
    if (presentIn && input !== undefined) ctx.ignore(src.label[0], `superseded by ${inLabel}`);
    if (presentOut && output !== undefined) ctx.ignore(src.label[1], `superseded by ${outLabel}`);
    const wantIn = presentIn && input === undefined;
    const wantOut = presentOut && output === undefined;
    if (!wantIn && !wantOut) continue;
    let got: Sides;
    try {
      got = src.read(ctx, ev, scan, { input: wantIn ? [] : undefined, output: wantOut ? [] : undefined });
    } catch (err) {
      ctx.ignore(src.label.join(', '), `could not be read: ${err instanceof Error ? err.message : String(err)}`);
      continue;
    }
    if (wantIn && got.input && got.input.length > 0) {
      input = got.input;
      inLabel = got.inFrom || src.label[0];
      ctx.map('inputMessages', inLabel);
    }
    if (wantOut && got.output && got.output.length > 0) {
      output = got.output;
      outLabel = got.outFrom || src.label[1];
      ctx.map('outputMessages', outLabel);
    }
  }
  return { input: input ?? [], output: output ?? [] };
}
