// Templates (template-render.ts: variables, placeholders and rendering) and their content hash.
import crypto from 'node:crypto';
import type { Template } from './template-render.ts';

export {
  extractPlaceholders,
  extractVariables,
  isPlaceholder,
  placeholderProblem,
  render,
  type ChatEntry,
  type ChatMessage,
  type ChatPlaceholder,
  type PlaceholderFill,
  type PromptType,
  type Rendered,
  type Template,
} from './template-render.ts';

const quotedKeys = new Map<string, string>();
function quotedKey(k: string): string {
  let q = quotedKeys.get(k);
  if (q === undefined) {
    q = JSON.stringify(k);
    if (quotedKeys.size < 4_096) quotedKeys.set(k, q);
  }
  return q;
}

/**
 * Keys in sorted order, so equal content has one serialisation. (Built by appending: the same
 * text as mapping and joining, in about half the time; content hashes stored before stay valid.
 * An undefined array element is written as nothing, an undefined property value as `undefined`.)
 */
export function canonicalJson(value: unknown): string {
  if (!value || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out += ',';
      const item = canonicalJson(value[i]) as string | undefined; // undefined for an undefined element (as join writes it)
      if (item !== undefined) out += item;
    }
    return `${out}]`;
  }
  const keys = Object.keys(value).sort();
  let out = '{';
  for (let i = 0; i < keys.length; i++) {
    if (i > 0) out += ',';
    out += `${quotedKey(keys[i]!)}:${canonicalJson((value as Record<string, unknown>)[keys[i]!])}`;
  }
  return `${out}}`;
}

export function contentHash(template: Template, config: Record<string, unknown>): string {
  return crypto.createHash('sha256').update(canonicalJson({ template, config })).digest('hex');
}
