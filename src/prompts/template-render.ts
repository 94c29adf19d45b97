// Templates: `text` (a string) or `chat` ([{role, content}] messages and
// {"type":"placeholder","name"} slots), with `{{name}}` variables (`^[A-Za-z_][A-Za-z0-9_.]*$`,
// whitespace inside the braces allowed) and no logic: variables, placeholders and rendering. No
// Node imports: the console bundles this file (web/src/pages/prompt-editor.tsx). The SDKs (sdk/js,
// sdk/python) compile locally with the same rules; test/fixtures/prompt-compile.json holds the
// cases all must agree on.
export type PromptType = 'text' | 'chat';
export interface ChatMessage {
  role: string;
  content: string;
  [extra: string]: unknown;
}
/** A slot of a chat template filled at render time with a list of messages (e.g. the history). */
export interface ChatPlaceholder {
  type: 'placeholder';
  name: string;
}
export type ChatEntry = ChatMessage | ChatPlaceholder;
export type Template = string | ChatEntry[];
/** What fills the placeholders at render time: name → messages. */
export type PlaceholderFill = Record<string, unknown>;

const VARIABLE = /\{\{\s*([A-Za-z_][A-Za-z0-9_.]*)\s*\}\}/g;

export const isPlaceholder = (entry: ChatEntry): entry is ChatPlaceholder => entry.type === 'placeholder';

function texts(template: Template): string[] {
  return typeof template === 'string' ? [template] : template.flatMap((m) => (isPlaceholder(m) ? [] : [m.content]));
}

/** Placeholder names in order of first appearance, each once ([] for a text template). */
export function extractPlaceholders(template: Template): string[] {
  if (typeof template === 'string') return [];
  return [...new Set(template.filter(isPlaceholder).map((p) => p.name))];
}

/**
 * The first problem of a placeholder fill (a 400 naming the name, index and field), or undefined:
 * each value is a list of messages, each an object with a non-empty string `role` and a string
 * `content` (other fields, e.g. tool_calls, are kept as sent).
 */
export function placeholderProblem(placeholders: PlaceholderFill): string | undefined {
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

/** Variables in order of first appearance, each once. */
export function extractVariables(template: Template): string[] {
  const seen = new Set<string>();
  for (const t of texts(template)) for (const m of t.matchAll(VARIABLE)) seen.add(m[1]!);
  return [...seen];
}

function lookup(inputs: Record<string, unknown>, name: string): { found: boolean; value?: unknown } {
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

export interface Rendered {
  text?: string;
  messages?: ChatMessage[];
  /** Inputs that no variable used (reported, not fatal). */
  unusedInputs: string[];
  /** Variables without an input (the caller answers 422). */
  missing: string[];
  /** Placeholders given that the template does not have (reported, not fatal). */
  unusedPlaceholders: string[];
  /** Placeholders of the template without messages (the caller answers 422). */
  missingPlaceholders: string[];
}

/**
 * Fills variables and placeholders. Messages that fill a placeholder are inserted as given: their
 * content is the caller's (a conversation), never read as a template. The fill must have passed
 * placeholderProblem.
 */
export function render(template: Template, inputs: Record<string, unknown>, placeholders: PlaceholderFill = {}): Rendered {
  const missing = new Set<string>();
  const used = new Set<string>();
  const fill = (t: string) =>
    t.replace(VARIABLE, (whole, name: string) => {
      const { found, value } = lookup(inputs, name);
      if (!found) {
        missing.add(name);
        return whole;
      }
      used.add(Object.hasOwn(inputs, name) ? name : name.split('.')[0]!);
      return asText(value);
    });
  const out: Rendered = { unusedInputs: [], missing: [], unusedPlaceholders: [], missingPlaceholders: [] };
  const missingSlots = new Set<string>();
  if (typeof template === 'string') out.text = fill(template);
  else
    out.messages = template.flatMap((m): ChatMessage[] => {
      if (!isPlaceholder(m)) return [{ ...m, content: fill(m.content) }];
      const given = placeholders[m.name];
      if (!Object.hasOwn(placeholders, m.name) || !Array.isArray(given)) missingSlots.add(m.name);
      return Array.isArray(given) ? (given as ChatMessage[]).map((g) => ({ ...g })) : [];
    });
  out.missing = [...missing];
  out.missingPlaceholders = [...missingSlots];
  out.unusedInputs = Object.keys(inputs).filter((k) => !used.has(k));
  const slots = new Set(extractPlaceholders(template));
  out.unusedPlaceholders = Object.keys(placeholders).filter((k) => !slots.has(k));
  return out;
}
