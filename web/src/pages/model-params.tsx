// A prompt version's model parameters: its `config` (free JSON, docs/prompts.md) with the keys
// agents and the judge read named — model, temperature, max_tokens, top_p (judge-client.ts passes
// temperature, top_p, max_tokens, ... to the endpoint) — and every other key as JSON. Empty fields
// are left out of the config.
import { ApiError } from '../api.ts';

export interface ModelParams {
  model: string;
  temperature: string;
  max_tokens: string;
  top_p: string;
  /** the rest of the config, as a JSON object's text */
  other: string;
}

const NAMED = ['model', 'temperature', 'max_tokens', 'top_p'] as const;

export function paramsOf(config: Record<string, unknown> | undefined): ModelParams {
  const c = config ?? {};
  const rest = Object.fromEntries(Object.entries(c).filter(([k]) => !(NAMED as readonly string[]).includes(k)));
  const s = (v: unknown) => (v === undefined || v === null ? '' : String(v));
  return {
    model: s(c.model),
    temperature: s(c.temperature),
    max_tokens: s(c.max_tokens),
    top_p: s(c.top_p),
    other: Object.keys(rest).length ? JSON.stringify(rest, null, 2) : '',
  };
}

/** The config to send; a field that is not what it should be is refused here, naming it. */
export function configOf(p: ModelParams): Record<string, unknown> {
  let rest: unknown = {};
  if (p.other.trim()) {
    try {
      rest = JSON.parse(p.other);
    } catch {
      throw new ApiError(0, 'Other parameters: not valid JSON');
    }
    if (typeof rest !== 'object' || rest === null || Array.isArray(rest)) throw new ApiError(0, 'Other parameters: must be a JSON object');
  }
  const num = (name: string, v: string, integer = false) => {
    const n = Number(v);
    if (!Number.isFinite(n) || (integer && !Number.isInteger(n)))
      throw new ApiError(0, `${name}: not ${integer ? 'an integer' : 'a number'}`);
    return n;
  };
  return {
    ...(rest as Record<string, unknown>),
    ...(p.model.trim() ? { model: p.model.trim() } : {}),
    ...(p.temperature.trim() ? { temperature: num('temperature', p.temperature) } : {}),
    ...(p.max_tokens.trim() ? { max_tokens: num('max_tokens', p.max_tokens, true) } : {}),
    ...(p.top_p.trim() ? { top_p: num('top_p', p.top_p) } : {}),
  };
}

export function ModelParamsFields({ value, onChange }: { value: ModelParams; onChange(v: ModelParams): void }) {
  const set = (k: keyof ModelParams) => (e: Event) => onChange({ ...value, [k]: (e.target as HTMLInputElement).value });
  return (
    <fieldset class="model-params">
      <legend>Model parameters (the version's config)</legend>
      <div class="filters">
        <label>
          Model
          <input name="config_model" placeholder="gpt-4o-mini" value={value.model} onInput={set('model')} />
        </label>
        <label>
          Temperature
          <input
            name="config_temperature"
            type="number"
            min="0"
            max="2"
            step="any"
            value={value.temperature}
            onInput={set('temperature')}
          />
        </label>
        <label>
          Max tokens
          <input name="config_max_tokens" type="number" min="1" step="1" value={value.max_tokens} onInput={set('max_tokens')} />
        </label>
        <label>
          Top p
          <input name="config_top_p" type="number" min="0" max="1" step="any" value={value.top_p} onInput={set('top_p')} />
        </label>
      </div>
      <label class="wide">
        Other parameters (JSON object: tools, response_format, seed, …)
        <textarea name="config_other" rows={3} placeholder='{"seed": 7}' value={value.other} onInput={set('other')} />
      </label>
    </fieldset>
  );
}
