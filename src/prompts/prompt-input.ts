// What a prompt write says and the checks it passes before it reaches the store: version
// references (a number, `latest`, a label), label names, templates by type, config size. Pure:
// the service (service.ts) and the routes call these.
import { badRequest, unprocessable } from '../errors.ts';
import { canonicalJson, type PromptType, type Template } from './template.ts';

export const LABEL = /^[a-z0-9][a-z0-9._-]{0,63}$/;
/** A version's config (model, temperature, tools...) is returned with every read: kept small. */
export const CONFIG_MAX_BYTES = 64 * 1024;

export interface CreatePromptInput {
  prompt_id: string;
  type: PromptType;
  template: Template;
  description?: string;
  config?: Record<string, unknown>;
  labels?: string[];
  commit_message?: string;
}

export interface NewVersionInput {
  template: Template;
  config?: Record<string, unknown>;
  labels?: string[];
  commit_message?: string;
}

/** A version reference: an integer, `latest`, or a label name. */
export type VersionRef = { kind: 'number'; version: number } | { kind: 'latest' } | { kind: 'label'; label: string };

export function parseVersionRef(raw: string | number, field = 'version'): VersionRef {
  if (typeof raw === 'number' || /^\d+$/.test(raw)) {
    const n = Number(raw);
    if (!Number.isSafeInteger(n) || n < 1 || n > 2_147_483_647)
      throw badRequest(`${field}: must be a version number from 1, "latest" or a label`);
    return { kind: 'number', version: n };
  }
  if (raw === 'latest') return { kind: 'latest' };
  if (!LABEL.test(raw)) throw badRequest(`${field}: "${raw}" is not a version number, "latest" or a label name`);
  return { kind: 'label', label: raw };
}

export const refKey = (ref: VersionRef) =>
  ref.kind === 'number' ? String(ref.version) : ref.kind === 'latest' ? 'latest' : `label:${ref.label}`;

export function checkTemplate(type: PromptType, template: Template): void {
  if (type === 'text' && typeof template !== 'string') throw unprocessable('template: must be a string for a text prompt');
  if (type === 'chat' && !Array.isArray(template))
    throw unprocessable('template: must be an array of {"role","content"} messages for a chat prompt');
}

export function checkConfig(config: Record<string, unknown> | undefined): void {
  if (config === undefined) return;
  const bytes = Buffer.byteLength(canonicalJson(config));
  if (bytes > CONFIG_MAX_BYTES) throw badRequest(`config: ${bytes} bytes of JSON, at most ${CONFIG_MAX_BYTES}`);
}

export function checkLabels(labels: readonly string[] | undefined): string[] {
  const out = [...new Set(labels ?? [])];
  for (const l of out) {
    if (l === 'latest') throw badRequest('labels: "latest" is reserved: it always names the newest version');
    if (/^\d+$/.test(l)) throw badRequest(`labels: "${l}" would be read as a version number`);
  }
  return out;
}

/** 400 unless the name can be a label. */
export function checkLabelName(label: string): void {
  checkLabels([label]);
  if (!LABEL.test(label)) throw badRequest(`label: "${label}" must match ${LABEL.source}`);
}
