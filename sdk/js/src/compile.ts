// Local compile of a prompt version, with the server's render rules (src/prompts/template.ts) and
// its errors word for word: `{{name}}` variables (an input of that exact name, else a dotted
// path into nested inputs; strings as they are, other values as JSON, null as nothing), chat
// placeholders filled with messages inserted as given, 422 for what is missing and 400 for a
// fill that is not a list of {role, content} messages. test/fixtures/prompt-compile.json pins it.
import { TraceloomCompileError } from './errors.ts';

export interface ChatMessage {
  role: string;
  content: string;
  [extra: string]: unknown;
}
export interface ChatPlaceholder {
  type: 'placeholder';
  name: string;
}
export type ChatEntry = ChatMessage | ChatPlaceholder;
export type Template = string | ChatEntry[];
export type Variables = Record<string, unknown>;
export type Placeholders = Record<string, unknown>;

const VARIABLE = /\{\{\s*([A-Za-z_][A-Za-z0-9_.]*)\s*\}\}/g;

export const isPlaceholder = (e: ChatEntry): e is ChatPlaceholder => (e as { type?: unknown }).type === 'placeholder';

function lookup(inputs: Variables, name: string): { found: boolean; value?: unknown } {
  if (Object.hasOwn(inputs, name)) return { found: true, value: inputs[name] };
  let cur: unknown = inputs;
  for (const part of name.split('.')) {
    if (cur === null || typeof cur !== 'object' || !Object.hasOwn(cur, part)) return { found: false };
    cur = (cur as Record<string, unknown>)[part];
  }
  return { found: true, value: cur };
}

function asText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === null || value === undefined) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** The first problem of a placeholder fill, as the server's 400 names it. */
export function placeholderProblem(placeholders: Placeholders): string | undefined {
  for (const [name, messages] of Object.entries(placeholders)) {
    if (!Array.isArray(messages)) return `placeholders.${name}: must be an array of messages`;
    for (let i = 0; i < messages.length; i++) {
      const m: unknown = messages[i];
      const at = `placeholders.${name}[${i}]`;
      if (m === null || typeof m !== 'object' || Array.isArray(m)) return `${at}: must be an object with role and content`;
      const { role, content } = m as Record<string, unknown>;
      if (typeof role !== 'string' || role === '') return `${at}.role: must be a non-empty string`;
      if (typeof content !== 'string') return `${at}.content: must be a string`;
    }
  }
  return undefined;
}

export interface Compiled {
  text?: string;
  messages?: ChatMessage[];
  unusedInputs: string[];
  unusedPlaceholders: string[];
}

/** Fills a template; throws TraceloomCompileError (400 or 422, the server's detail) when it cannot. */
export function compileTemplate(template: Template, variables: Variables = {}, placeholders: Placeholders = {}): Compiled {
  const problem = placeholderProblem(placeholders);
  if (problem) throw new TraceloomCompileError(400, problem);
  const missing = new Set<string>();
  const missingSlots = new Set<string>();
  const used = new Set<string>();
  const fill = (t: string) =>
    t.replace(VARIABLE, (whole, name: string) => {
      const { found, value } = lookup(variables, name);
      if (!found) {
        missing.add(name);
        return whole;
      }
      used.add(Object.hasOwn(variables, name) ? name : name.split('.')[0]!);
      return asText(value);
    });
  const out: Compiled = { unusedInputs: [], unusedPlaceholders: [] };
  const slots = new Set<string>();
  if (typeof template === 'string') out.text = fill(template);
  else
    out.messages = template.flatMap((m): ChatMessage[] => {
      if (!isPlaceholder(m)) return [{ ...m, content: fill(m.content) }];
      slots.add(m.name);
      if (!Object.hasOwn(placeholders, m.name)) {
        missingSlots.add(m.name);
        return [];
      }
      return (placeholders[m.name] as ChatMessage[]).map((g) => ({ ...g }));
    });
  const errors = [
    ...(missing.size > 0 ? [`Missing variables: ${[...missing].join(', ')}`] : []),
    ...(missingSlots.size > 0 ? [`Missing placeholders: ${[...missingSlots].join(', ')}`] : []),
  ];
  if (errors.length > 0) throw new TraceloomCompileError(422, errors.join('; '));
  out.unusedInputs = Object.keys(variables).filter((k) => !used.has(k));
  out.unusedPlaceholders = Object.keys(placeholders).filter((k) => !slots.has(k));
  return out;
}
