// The LLM vendor, as a semconv gen_ai.provider.name value. The provider keys sometimes name the
// framework (strands-agents, gcp.vertex.agent, spring_ai) or the SDK's client id (openai.chat);
// then, or when no key is present, the vendor is inferred from server.address and the model id.
import { asStr, type SpanCtx } from './context.ts';
import { PROVIDER_KEYS } from './keys.ts';

/** Spellings seen in the wild → semconv value (reference §1.2 and §2.12). */
const ALIASES: Record<string, string> = {
  openai: 'openai',
  anthropic: 'anthropic',
  'aws.bedrock': 'aws.bedrock',
  'azure.ai.openai': 'azure.ai.openai',
  'azure.ai.inference': 'azure.ai.inference',
  'gcp.gemini': 'gcp.gemini',
  'gcp.vertex_ai': 'gcp.vertex_ai',
  'gcp.gen_ai': 'gcp.gen_ai',
  cohere: 'cohere',
  deepseek: 'deepseek',
  groq: 'groq',
  'ibm.watsonx.ai': 'ibm.watsonx.ai',
  mistral_ai: 'mistral_ai',
  perplexity: 'perplexity',
  x_ai: 'x_ai',
  moonshot_ai: 'moonshot_ai',
  xai: 'x_ai',
  'x-ai': 'x_ai',
  vertex_ai: 'gcp.vertex_ai',
  vertexai: 'gcp.vertex_ai',
  vertex: 'gcp.vertex_ai',
  'google.vertex': 'gcp.vertex_ai',
  'google-vertex': 'gcp.vertex_ai',
  gemini: 'gcp.gemini',
  'google.generative-ai': 'gcp.gemini',
  'google-genai': 'gcp.gemini',
  google_genai: 'gcp.gemini',
  'google.genai': 'gcp.gemini',
  google_ai: 'gcp.gemini',
  googleai: 'gcp.gemini', // Genkit plugin
  'vertex-ai': 'gcp.vertex_ai',
  google: 'gcp.gen_ai',
  gcp: 'gcp.gen_ai',
  mistral: 'mistral_ai',
  mistralai: 'mistral_ai',
  amazon: 'aws.bedrock',
  aws: 'aws.bedrock',
  bedrock: 'aws.bedrock',
  'amazon-bedrock': 'aws.bedrock',
  amazon_bedrock: 'aws.bedrock',
  aws_bedrock: 'aws.bedrock',
  azure: 'azure.ai.openai',
  'azure-openai': 'azure.ai.openai',
  azure_openai: 'azure.ai.openai',
  'az.ai.openai': 'azure.ai.openai',
  'az.ai.inference': 'azure.ai.inference',
  ibm: 'ibm.watsonx.ai',
  watsonx: 'ibm.watsonx.ai',
  moonshot: 'moonshot_ai',
  moonshotai: 'moonshot_ai',
};

/** Values that name a framework or a generic client, not the vendor that served the call. */
const NOT_VENDORS = new Set([
  'strands-agents',
  'strands',
  'gcp.vertex.agent',
  'spring_ai',
  'langchain',
  'langgraph',
  'llamaindex',
  'llama_index',
  'crewai',
  'semantic_kernel',
  'autogen',
  'pydantic_ai',
  'openai_agents',
  'mastra',
  'openai-compatible',
  'openai_compatible',
]);

export type ProviderValue = { kind: 'vendor' | 'unknown'; value: string } | { kind: 'framework'; value: string };

/** One provider value normalised: a semconv vendor, a framework, or an unknown vendor kept as sent. */
export function normaliseProvider(raw: string): ProviderValue {
  const v = raw.trim().toLowerCase();
  const hit = ALIASES[v];
  if (hit) return { kind: 'vendor', value: hit };
  if (NOT_VENDORS.has(v)) return { kind: 'framework', value: v };
  if (v.startsWith('az.ai.')) return { kind: 'vendor', value: `azure.ai.${v.slice(6)}` };
  const dot = v.indexOf('.');
  if (dot > 0) {
    // SDK client ids: openai.chat, anthropic.messages, google.vertex.chat, vertex.anthropic.messages
    const second = v.indexOf('.', dot + 1);
    const two = second > 0 ? ALIASES[v.slice(0, second)] : undefined;
    if (two) return { kind: 'vendor', value: two };
    const one = ALIASES[v.slice(0, dot)];
    if (one) return { kind: 'vendor', value: one };
    return { kind: 'unknown', value: v.slice(0, dot) };
  }
  return { kind: 'unknown', value: v };
}

function hostIs(host: string, domain: string): boolean {
  return host === domain || host.endsWith(`.${domain}`);
}

/** The vendor behind a server.address host; undefined for local or unknown hosts. */
export function providerFromHost(address: string): string | undefined {
  let host = address.trim().toLowerCase();
  const colon = host.lastIndexOf(':');
  if (colon > 0 && !host.includes(']')) host = host.slice(0, colon);
  if (hostIs(host, 'openai.azure.com') || hostIs(host, 'cognitiveservices.azure.com')) return 'azure.ai.openai';
  if (hostIs(host, 'services.ai.azure.com') || hostIs(host, 'inference.ai.azure.com') || hostIs(host, 'models.ai.azure.com'))
    return 'azure.ai.inference';
  if (hostIs(host, 'openai.com')) return 'openai';
  if (hostIs(host, 'anthropic.com')) return 'anthropic';
  if (host.includes('bedrock') && hostIs(host, 'amazonaws.com')) return 'aws.bedrock';
  if (host.endsWith('aiplatform.googleapis.com')) return 'gcp.vertex_ai'; // regional: us-central1-aiplatform.googleapis.com
  if (hostIs(host, 'generativelanguage.googleapis.com')) return 'gcp.gemini';
  if (hostIs(host, 'mistral.ai')) return 'mistral_ai';
  if (hostIs(host, 'x.ai')) return 'x_ai';
  if (hostIs(host, 'cohere.com') || hostIs(host, 'cohere.ai')) return 'cohere';
  if (hostIs(host, 'groq.com')) return 'groq';
  if (hostIs(host, 'deepseek.com')) return 'deepseek';
  if (hostIs(host, 'perplexity.ai')) return 'perplexity';
  if (hostIs(host, 'moonshot.ai') || hostIs(host, 'moonshot.cn')) return 'moonshot_ai';
  return undefined;
}

// Bedrock model ids: `anthropic.claude-…-v1:0`, with an optional cross-region inference prefix.
const BEDROCK_MODEL =
  /^(?:(?:us|eu|apac|ap|global|us-gov|jp|au|ca)\.)?(?:anthropic|amazon|meta|cohere|mistral|ai21|deepseek|writer|qwen|openai|twelvelabs|stability|luma)\.[a-z0-9]/;
const OPENAI_MODEL =
  /^(?:gpt-|gpt4|chatgpt|o[1-9](?:-|$)|text-embedding-(?:3|ada)|davinci|babbage|dall-e|whisper|tts-|omni-moderation|codex-|computer-use)/;
const MISTRAL_MODEL = /^(?:mistral|mixtral|codestral|ministral|magistral|pixtral|devstral|voxtral|open-mistral|open-mixtral)/;
const COHERE_MODEL = /^(?:command|embed-english|embed-multilingual|rerank-|c4ai-)/;

/** The vendor a model id implies; undefined when the id does not say (e.g. open-weight models). */
export function providerFromModel(model: string): string | undefined {
  let m = model.trim().toLowerCase();
  if (m.startsWith('arn:aws:bedrock')) return 'aws.bedrock';
  if (BEDROCK_MODEL.test(m)) return 'aws.bedrock';
  if (m.startsWith('projects/') || m.startsWith('publishers/')) return 'gcp.vertex_ai';
  if (m.startsWith('models/')) m = m.slice(7); // Gemini API resource names
  const slash = m.indexOf('/');
  if (slash > 0) {
    const byPrefix = ALIASES[m.slice(0, slash)]; // openai/gpt-4o (gateway style)
    if (byPrefix) return byPrefix;
    m = m.slice(slash + 1);
  }
  if (m.startsWith('claude')) return m.includes('@') ? 'gcp.vertex_ai' : 'anthropic'; // claude-…@date is Vertex's spelling
  if (OPENAI_MODEL.test(m)) return 'openai';
  if (m.startsWith('gemini')) return 'gcp.gemini';
  if (MISTRAL_MODEL.test(m)) return 'mistral_ai';
  if (m.startsWith('grok')) return 'x_ai';
  if (COHERE_MODEL.test(m)) return 'cohere';
  if (m.startsWith('deepseek')) return 'deepseek';
  if (m.startsWith('sonar')) return 'perplexity';
  if (m.startsWith('kimi') || m.startsWith('moonshot')) return 'moonshot_ai';
  return undefined;
}

/**
 * The span's provider: the first key naming a vendor (normalised), else inferred. One refinement:
 * `openai` is what OpenAI-client instrumentations report for any base URL, so a server.address
 * that is clearly another vendor's (Azure, Groq, DeepSeek, ...) wins over it.
 */
export function mapProvider(ctx: SpanCtx, model: string, hint?: { value: string; source: string }): string {
  let chosen: string | undefined;
  let chosenKey = '';
  const frameworks: string[] = [];
  for (const key of PROVIDER_KEYS) {
    const raw = asStr(ctx.a[key]);
    if (raw === undefined) {
      if (ctx.a[key] !== undefined && ctx.a[key] !== '') ctx.ignore(key, 'not a string');
      continue;
    }
    const p = normaliseProvider(raw);
    if (p.kind === 'framework') {
      frameworks.push(`${key}=${raw}`);
      ctx.ignore(key, `names the framework or client (${raw}), not the LLM vendor`);
      continue;
    }
    if (chosen === undefined) {
      chosen = p.value;
      chosenKey = key;
      ctx.map('provider', p.value === raw ? `${key} (${raw})` : `${key} (${raw} → ${p.value})`);
    } else ctx.ignore(key, p.value === chosen ? `superseded by ${chosenKey}` : `superseded by ${chosenKey} (${raw})`);
  }
  const address = asStr(ctx.a['server.address']);
  const fromHost = address ? providerFromHost(address) : undefined;
  if (chosen === 'openai' && fromHost && fromHost !== 'openai') {
    ctx.ignore(chosenKey, `the OpenAI client was pointed at ${address}`);
    ctx.map('provider', `server.address (${address} → ${fromHost})`);
    return fromHost;
  }
  if (chosen !== undefined) return chosen;
  if (hint) {
    const p = normaliseProvider(hint.value);
    if (p.kind === 'vendor') {
      ctx.map('provider', `${hint.source} (${hint.value} → ${p.value})`);
      return p.value;
    }
  }
  const why = frameworks.length > 0 ? `; ${frameworks.join(', ')} names the framework` : '';
  if (fromHost) {
    ctx.map('provider', `inferred from server.address (${address} → ${fromHost})${why}`);
    return fromHost;
  }
  const fromModel = model ? providerFromModel(model) : undefined;
  if (fromModel) {
    ctx.map('provider', `inferred from the model (${model} → ${fromModel})${why}`);
    return fromModel;
  }
  return '';
}
