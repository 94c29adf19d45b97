// One message shape for every dialect: {role, content, tool_calls?, tool_call_id?, name?}.
// Accepted message forms: OTel GenAI (role + parts), OpenAI chat (content string or parts,
// tool_calls with function.{name,arguments}), Anthropic content blocks (tool_use, tool_result),
// AI SDK prompt parts (tool-call, tool-result), Gemini/ADK Content (role model, parts with text,
// function_call, function_response), Bedrock/Strands blocks (text, toolUse, toolResult), OpenAI
// Responses items, LangChain serialised messages. Text parts are joined; reasoning is dropped;
// media becomes a placeholder like "[image https://…]"; each tool result becomes its own `tool`
// message. Arguments that are JSON strings are parsed. Never throws on odd input: what is not
// understood is skipped.
import type { NormalizedMessage } from '../../executions/span.ts';
import { asId, asStr, isObj, LIMITS, parseLoose, toText } from './context.ts';

type Obj = Record<string, unknown>;
type ToolCall = { id: string; name: string; arguments: unknown };

const ROLES: Record<string, string> = { model: 'assistant', ai: 'assistant', human: 'user', toolresult: 'tool' }; // toolResult: Flue
const LANGCHAIN_ROLES: Record<string, string> = {
  HumanMessage: 'user',
  AIMessage: 'assistant',
  SystemMessage: 'system',
  ToolMessage: 'tool',
  FunctionMessage: 'tool',
  ChatMessage: 'user',
};
const SKIPPED_PARTS = new Set([
  'reasoning',
  'thinking',
  'redacted_thinking',
  'server_tool_call',
  'server_tool_call_response',
  'compaction',
  'step-start',
  'source',
]);
const MEDIA_PARTS = new Set([
  'blob',
  'file',
  'uri',
  'image',
  'image_url',
  'input_image',
  'input_audio',
  'input_file',
  'audio',
  'document',
  'video',
]);

export function normRole(v: unknown, fallback: string): string {
  const r = asStr(v)?.toLowerCase();
  if (!r) return fallback;
  return ROLES[r] ?? r;
}

/** Tool arguments: a JSON string becomes its value; anything else is kept as sent. */
export function normArgs(v: unknown): unknown {
  if (typeof v === 'string') {
    const parsed = parseLoose(v);
    return parsed === undefined ? v : parsed;
  }
  return v ?? null;
}

function toolCall(id: unknown, name: unknown, args: unknown): ToolCall {
  return { id: asId(id) ?? '', name: asStr(name) ?? '', arguments: normArgs(args) };
}

/** A tool call in any of the known spellings, or undefined. */
function readToolCall(c: unknown): ToolCall | undefined {
  if (!isObj(c)) return undefined;
  const fn = c['function'];
  if (isObj(fn)) return toolCall(c['id'], fn['name'], fn['arguments']); // OpenAI
  if (c['toolCallId'] !== undefined || c['toolName'] !== undefined)
    return toolCall(c['toolCallId'], c['toolName'], c['input'] ?? c['args']); // AI SDK
  if (c['name'] !== undefined) return toolCall(c['id'] ?? c['call_id'], c['name'], c['arguments'] ?? c['args'] ?? c['input']);
  return undefined;
}

function readToolCalls(v: unknown, into: ToolCall[]): void {
  const list = typeof v === 'string' ? parseLoose(v) : v;
  if (!Array.isArray(list)) return;
  for (const c of list) {
    if (into.length >= LIMITS.toolCalls) break;
    const tc = readToolCall(c);
    if (tc) into.push(tc);
  }
}

/** Text of a tool result in any form: strings as sent, AI SDK {type,value} outputs, content blocks flattened. */
function resultText(v: unknown, depth = 0): string {
  if (typeof v === 'string') return v;
  if (
    depth < 4 &&
    Array.isArray(v) &&
    v.length > 0 &&
    v.every((b) => isObj(b) && (typeof b['text'] === 'string' || b['json'] !== undefined))
  ) {
    return v.map((b) => (typeof (b as Obj)['text'] === 'string' ? ((b as Obj)['text'] as string) : toText((b as Obj)['json']))).join('\n');
  }
  if (isObj(v) && typeof v['type'] === 'string' && 'value' in v && Object.keys(v).length <= 3) return resultText(v['value'], depth + 1); // AI SDK output
  return toText(v);
}

function media(p: Obj, kind: string): string {
  const uri =
    asStr(p['uri']) ?? asStr(p['url']) ?? asStr(p['file_id']) ?? asStr(isObj(p['image_url']) ? p['image_url']['url'] : p['image_url']);
  const label = asStr(p['modality']) ?? asStr(p['mediaType']) ?? asStr(p['mime_type']) ?? (kind.includes('image') ? 'image' : kind);
  return uri && !uri.startsWith('data:') ? `[${label} ${uri}]` : `[${label}]`;
}

interface Acc {
  texts: string[];
  calls: ToolCall[];
  results: NormalizedMessage[];
}

/** One part (or content block) into the accumulator. */
function addPart(p: unknown, acc: Acc): void {
  if (typeof p === 'string') {
    acc.texts.push(p);
    return;
  }
  if (!isObj(p)) return;
  const type = typeof p['type'] === 'string' ? p['type'] : '';
  if (SKIPPED_PARTS.has(type) || p['thought'] === true) return;
  switch (type) {
    case 'tool_call':
    case 'tool-call':
    case 'toolCall': // Flue
    case 'tool_use':
    case 'function_call':
      if (acc.calls.length < LIMITS.toolCalls) acc.calls.push(readToolCall(p) ?? toolCall(p['id'], p['name'], undefined));
      return;
    case 'tool_call_response':
      acc.results.push(toolMessage(p['id'], undefined, 'response' in p ? p['response'] : p['result']));
      return;
    case 'tool-result':
      acc.results.push(toolMessage(p['toolCallId'], p['toolName'], 'output' in p ? p['output'] : p['result']));
      return;
    case 'tool_result':
      acc.results.push(toolMessage(p['tool_use_id'] ?? p['id'], undefined, p['content']));
      return;
    case 'function_call_output':
      acc.results.push(toolMessage(p['call_id'], undefined, p['output']));
      return;
  }
  if (MEDIA_PARTS.has(type)) {
    acc.texts.push(media(p, type));
    return;
  }
  // Gemini / ADK parts
  const fc = p['function_call'] ?? p['functionCall'];
  if (isObj(fc)) {
    acc.calls.push(toolCall(fc['id'], fc['name'], fc['args']));
    return;
  }
  const fr = p['function_response'] ?? p['functionResponse'];
  if (isObj(fr)) {
    acc.results.push(toolMessage(fr['id'], fr['name'], fr['response']));
    return;
  }
  // Genkit parts
  const treq = p['toolRequest'];
  if (isObj(treq)) {
    acc.calls.push(toolCall(treq['ref'], treq['name'], treq['input']));
    return;
  }
  const tres = p['toolResponse'];
  if (isObj(tres)) {
    acc.results.push(toolMessage(tres['ref'], tres['name'], tres['output']));
    return;
  }
  if (isObj(p['media'])) {
    acc.texts.push(media(p['media'], 'media'));
    return;
  }
  if (isObj(p['inline_data']) || isObj(p['inlineData']) || isObj(p['file_data']) || isObj(p['fileData'])) {
    acc.texts.push('[file]');
    return;
  }
  // Bedrock / Strands content blocks
  const tu = p['toolUse'];
  if (isObj(tu)) {
    acc.calls.push(toolCall(tu['toolUseId'], tu['name'], tu['input']));
    return;
  }
  const tr = p['toolResult'];
  if (isObj(tr)) {
    acc.results.push(toolMessage(tr['toolUseId'], undefined, tr['content']));
    return;
  }
  if (isObj(p['image']) || isObj(p['document']) || isObj(p['video'])) {
    acc.texts.push(`[${isObj(p['image']) ? 'image' : isObj(p['document']) ? 'document' : 'video'}]`);
    return;
  }
  const text = typeof p['text'] === 'string' ? p['text'] : typeof p['content'] === 'string' ? p['content'] : undefined;
  if (text !== undefined) acc.texts.push(text);
}

function toolMessage(id: unknown, name: unknown, result: unknown): NormalizedMessage {
  const m: NormalizedMessage = { role: 'tool', content: result === undefined || result === null ? null : resultText(result) };
  const callId = asId(id);
  if (callId) m.tool_call_id = callId;
  const n = asStr(name);
  if (n) m.name = n;
  return m;
}

/** Content that is a JSON string of blocks (Strands, Traceloop multi-part) → the blocks; other strings stay text. */
function contentBlocks(s: string): unknown[] | undefined {
  const parsed = parseLoose(s);
  if (Array.isArray(parsed) && parsed.length > 0 && parsed.every(isBlock)) return parsed;
  if (isBlock(parsed)) return [parsed];
  return undefined;
}

const BLOCK_TYPES = new Set([
  'text',
  'input_text',
  'output_text',
  'tool_call',
  'tool-call',
  'tool_use',
  'tool_call_response',
  'tool-result',
  'tool_result',
  'function_call',
  'function_call_output',
  'reasoning',
  'thinking',
  'image',
  'image_url',
  'input_image',
  'file',
  'blob',
  'uri',
  'document',
  'audio',
]);

/** A content block of a known family; a JSON value a tool returned (objects of its own) is not one. */
function isBlock(b: unknown): boolean {
  if (!isObj(b)) return false;
  const type = b['type'];
  if (typeof type === 'string') return BLOCK_TYPES.has(type);
  return typeof b['text'] === 'string' || isObj(b['toolUse']) || isObj(b['toolResult']) || isObj(b['image']) || isObj(b['document']);
}

function addContent(content: unknown, acc: Acc, depth: number): void {
  if (typeof content === 'string') {
    const blocks = contentBlocks(content);
    if (blocks) for (const b of blocks.slice(0, LIMITS.parts)) addPart(b, acc);
    else acc.texts.push(content);
  } else if (Array.isArray(content)) {
    for (const b of content.slice(0, LIMITS.parts)) addPart(b, acc);
  } else if (isObj(content)) {
    if (Array.isArray(content['parts']) && depth < 4)
      addContent(content['parts'], acc, depth + 1); // Gemini Content
    else addPart(content, acc);
  } else if (typeof content === 'number' || typeof content === 'boolean') acc.texts.push(String(content));
}

/** One message-like value → zero or more normalized messages appended to `out`. */
export function normalizeMessage(raw: unknown, defaultRole: string, out: NormalizedMessage[], depth = 0): void {
  if (out.length >= LIMITS.messages || depth > LIMITS.depth) return;
  if (typeof raw === 'string') {
    out.push({ role: defaultRole, content: raw });
    return;
  }
  if (!isObj(raw)) return;
  let m: Obj = raw;
  let role: string;
  if (Array.isArray(m['id']) && isObj(m['kwargs'])) {
    // LangChain serialised: {lc, type:'constructor', id:[..., 'HumanMessage'], kwargs:{content, ...}}
    const cls = String(m['id'][m['id'].length - 1] ?? '');
    m = m['kwargs'];
    role = LANGCHAIN_ROLES[cls] ?? defaultRole;
  } else if (
    m['role'] === undefined &&
    typeof m['type'] === 'string' &&
    (m['type'] === 'function_call' || m['type'] === 'function_call_output')
  ) {
    const acc: Acc = { texts: [], calls: [], results: [] };
    addPart(m, acc); // OpenAI Responses items outside a message
    if (acc.calls.length) out.push({ role: 'assistant', content: null, tool_calls: acc.calls });
    out.push(...acc.results);
    return;
  } else {
    const t =
      m['role'] === undefined && typeof m['type'] === 'string' && ['human', 'ai', 'system', 'tool'].includes(m['type'])
        ? m['type']
        : m['role'];
    role = normRole(t, defaultRole);
  }

  const acc: Acc = { texts: [], calls: [], results: [] };
  let hasContent = false;
  if (Array.isArray(m['parts'])) {
    hasContent = true;
    for (const p of m['parts'].slice(0, LIMITS.parts)) addPart(p, acc);
  }
  if (m['content'] !== undefined && m['content'] !== null) {
    hasContent = true;
    addContent(m['content'], acc, depth);
  } else if (!hasContent && typeof m['text'] === 'string') {
    hasContent = true;
    acc.texts.push(m['text']);
  }
  if (m['tool_calls'] !== undefined) readToolCalls(m['tool_calls'], acc.calls);
  const fc = m['function_call'];
  if (isObj(fc)) acc.calls.push(toolCall(fc['id'], fc['name'], fc['arguments']));

  const toolCallId = asId(m['tool_call_id']) ?? asId(m['toolCallId']) ?? (role === 'tool' ? asId(m['id']) : undefined);
  // A tool message whose only parts were tool results is those results, not a wrapper around them.
  if (acc.results.length > 0 && acc.texts.length === 0 && acc.calls.length === 0) {
    for (const r of acc.results) if (out.length < LIMITS.messages) out.push(r);
    return;
  }
  for (const r of acc.results) if (out.length < LIMITS.messages) out.push(r);
  const msg: NormalizedMessage = { role, content: acc.texts.length ? acc.texts.join('\n') : null };
  if (!hasContent && acc.calls.length === 0 && acc.results.length === 0 && m['role'] === undefined && !toolCallId) return; // nothing message-like
  if (acc.calls.length) msg.tool_calls = acc.calls;
  if (toolCallId) msg.tool_call_id = toolCallId;
  const name = asStr(m['name']) ?? (role === 'tool' ? asStr(m['toolName']) : undefined);
  if (name) msg.name = name;
  if (out.length < LIMITS.messages) out.push(msg);
}

/**
 * A list of messages in any wrapping: an array, `{messages: [...]}` (also nested arrays, as
 * LangSmith sends), one message object, or plain text (a message of `defaultRole`).
 */
export function normalizeMessages(value: unknown, defaultRole: string, out: NormalizedMessage[] = [], depth = 0): NormalizedMessage[] {
  if (depth > 4 || value === undefined || value === null) return out;
  if (Array.isArray(value)) {
    for (const item of value) {
      if (out.length >= LIMITS.messages) break;
      if (Array.isArray(item)) normalizeMessages(item, defaultRole, out, depth + 1);
      else normalizeMessage(item, defaultRole, out, depth);
    }
  } else if (isObj(value) && Array.isArray(value['messages'])) normalizeMessages(value['messages'], defaultRole, out, depth + 1);
  else normalizeMessage(value, defaultRole, out, depth);
  return out;
}

/** Parts (semconv system instructions, Gemini system_instruction) flattened to one message's text; null when none. */
export function partsText(value: unknown): string | null {
  if (typeof value === 'string') return value;
  const acc: Acc = { texts: [], calls: [], results: [] };
  addContent(value, acc, 0);
  return acc.texts.length ? acc.texts.join('\n') : null;
}
