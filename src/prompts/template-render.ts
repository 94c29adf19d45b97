// Templates: `text` (a string) or `chat` ([{role, content}]), with `{{name}}` variables
// (`^[A-Za-z_][A-Za-z0-9_.]*$`, whitespace inside the braces allowed) and no logic: finding the
// variables and rendering. No Node import: the web console bundles this file too (its editor
// detects variables and previews a render exactly as the API will).

export type PromptType = 'text' | 'chat';
export interface ChatMessage {
  role: string;
  content: string;
  [extra: string]: unknown;
}
export type Template = string | ChatMessage[];

const VARIABLE = /\{\{\s*([A-Za-z_][A-Za-z0-9_.]*)\s*\}\}/g;

function texts(template: Template): string[] {
  return typeof template === 'string' ? [template] : template.map((m) => m.content);
}

/** Variables in order of first appearance, each once. */
export function extractVariables(template: Template): string[] {
  const seen = new Set<string>();
  for (const t of texts(template)) for (const m of t.matchAll(VARIABLE)) seen.add(m[1]!);
  return [...seen];
}

/** A variable's value: the input of that exact name, else a dotted path into nested inputs. */
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
}

export function render(template: Template, inputs: Record<string, unknown>): Rendered {
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
  const out: Rendered = { unusedInputs: [], missing: [] };
  if (typeof template === 'string') out.text = fill(template);
  else out.messages = template.map((m) => ({ ...m, content: fill(m.content) }));
  out.missing = [...missing];
  out.unusedInputs = Object.keys(inputs).filter((k) => !used.has(k));
  return out;
}
