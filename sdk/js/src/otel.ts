// '@traceloom/sdk/otel': the prompt-to-span link through OpenTelemetry (the API is an optional
// peer: only this entry point imports it). withPrompt() runs a function with a prompt version
// and its variables in the active context; PromptSpanProcessor stamps them on every GenAI span
// started inside (traceloom.prompt.id / .version / .inputs, which Traceloom's OTLP mapping reads),
// so the execution lists the template usage with no code at the call site.
import { context, createContextKey, type Context } from '@opentelemetry/api';
import type { Variables } from './compile.ts';
import type { Prompt } from './prompt.ts';

const PROMPT_KEY = createContextKey('traceloom.prompt');

interface PromptLink {
  attributes: Record<string, string | number>;
}

/** The context `ctx` (default: the active one) with the prompt linked. */
export function contextWithPrompt(prompt: Prompt, variables: Variables = {}, ctx: Context = context.active()): Context {
  const link: PromptLink = { attributes: prompt.spanAttributes(variables) };
  return ctx.setValue(PROMPT_KEY, link);
}

/** Runs fn with the prompt linked: GenAI spans started inside carry it (with PromptSpanProcessor registered). */
export function withPrompt<T>(prompt: Prompt, variables: Variables, fn: () => T): T {
  return context.with(contextWithPrompt(prompt, variables), fn);
}

/** Attribute prefixes of the GenAI conventions our mapping reads: a span with one is a GenAI span. */
const GENAI_PREFIXES = ['gen_ai.', 'llm.', 'ai.', 'openinference.', 'traceloop.'];

/** The part of an SDK span the processor touches (structurally the OpenTelemetry SDK's Span). */
interface StartedSpan {
  readonly attributes?: Record<string, unknown>;
  setAttributes(attributes: Record<string, string | number>): unknown;
}

export interface PromptSpanProcessorOptions {
  /** 'genai' (default): only spans that carry a GenAI attribute when started; 'all': every span in the scope. */
  spans?: 'genai' | 'all';
}

/**
 * A SpanProcessor for the OpenTelemetry SDK (put it before the exporting processor):
 * `new NodeTracerProvider({ spanProcessors: [new PromptSpanProcessor(), new BatchSpanProcessor(exporter)] })`.
 * Attributes a span sets itself are kept (it names its prompt better than the scope does).
 */
export class PromptSpanProcessor {
  private readonly all: boolean;

  constructor(options: PromptSpanProcessorOptions = {}) {
    this.all = options.spans === 'all';
  }

  onStart(span: StartedSpan, parentContext: Context): void {
    const link = parentContext.getValue(PROMPT_KEY) as PromptLink | undefined;
    if (!link) return;
    const own = span.attributes ?? {};
    if (!this.all && !Object.keys(own).some((k) => GENAI_PREFIXES.some((p) => k.startsWith(p)))) return;
    const missing: Record<string, string | number> = {};
    for (const [k, v] of Object.entries(link.attributes)) if (own[k] === undefined) missing[k] = v;
    span.setAttributes(missing);
  }

  onEnd(): void {}

  forceFlush(): Promise<void> {
    return Promise.resolve();
  }

  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}
