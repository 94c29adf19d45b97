// A prompt version as the SDK hands it out: its content and config, compile(), and the span
// attributes that link a GenAI call to it (read by Traceloom's OTLP mapping: traceloom.prompt.*).
import { compileTemplate, isPlaceholder, type ChatMessage, type Placeholders, type Template, type Variables } from './compile.ts';

/** A version as GET .../prompts/{name}/versions/{ref} answers it. */
export interface PromptVersionBody {
  prompt_id: string;
  version: number;
  type: 'text' | 'chat';
  template: Template;
  variables: string[];
  placeholders?: string[];
  config: Record<string, unknown>;
  labels: string[];
}

export const PROMPT_ID_ATTRIBUTE = 'traceloom.prompt.id';
export const PROMPT_VERSION_ATTRIBUTE = 'traceloom.prompt.version';
export const PROMPT_INPUTS_ATTRIBUTE = 'traceloom.prompt.inputs';

export class Prompt {
  readonly name: string;
  /** null for a fallback (it is no stored version). */
  readonly version: number | null;
  readonly type: 'text' | 'chat';
  readonly template: Template;
  readonly variables: string[];
  readonly placeholders: string[];
  readonly config: Record<string, unknown>;
  readonly labels: string[];
  /** True when this is the fallback given to get(), served because the service was unavailable. */
  readonly isFallback: boolean;

  constructor(body: PromptVersionBody, isFallback = false) {
    this.name = body.prompt_id;
    this.version = isFallback ? null : body.version;
    this.type = body.type;
    this.template = body.template;
    this.variables = body.variables;
    this.placeholders = body.placeholders ?? [];
    this.config = body.config;
    this.labels = body.labels;
    this.isFallback = isFallback;
  }

  /** The text of a text prompt: throws TraceloomCompileError (400/422) as the server's render would. */
  compile(variables?: Variables, placeholders?: Placeholders): string | ChatMessage[] {
    const c = compileTemplate(this.template, variables, placeholders);
    return c.text ?? c.messages!;
  }

  /**
   * Span attributes linking a call to this version (none for a fallback: it is no version). Put
   * them on the GenAI span with span.setAttributes(), or let PromptSpanProcessor do it.
   */
  spanAttributes(variables: Variables = {}): Record<string, string | number> {
    if (this.version === null) return {};
    return {
      [PROMPT_ID_ATTRIBUTE]: this.name,
      [PROMPT_VERSION_ATTRIBUTE]: this.version,
      [PROMPT_INPUTS_ATTRIBUTE]: JSON.stringify(variables),
    };
  }
}

/** A fallback prompt from what the caller gave: a string (text) or messages (chat). */
export function fallbackPrompt(name: string, fallback: Template, config: Record<string, unknown> = {}): Prompt {
  const type = typeof fallback === 'string' ? 'text' : 'chat';
  return new Prompt(
    {
      prompt_id: name,
      version: 0,
      type,
      template: fallback,
      variables: [],
      placeholders: typeof fallback === 'string' ? [] : [...new Set(fallback.filter(isPlaceholder).map((e) => e.name))],
      config,
      labels: [],
    },
    true,
  );
}
