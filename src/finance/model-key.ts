// The key an invoice's model and ours are matched by (docs/spend.md, "Models: how invoice lines
// meet executions"). Providers bill dated snapshots ("gpt-4o-2024-08-06",
// "claude-3-5-sonnet-20241022") while traces often name the alias ("gpt-4o"), or the reverse; both
// sides are reduced to the same key. Deliberately small and predictable: a finance team must be able
// to tell from the rule which lines meet.

const SNAPSHOT_SUFFIXES = [
  /-\d{4}-\d{2}-\d{2}$/, // OpenAI: gpt-4o-2024-08-06
  /[-@]\d{8}$/, // Anthropic: claude-3-5-sonnet-20241022; Vertex: claude-3-5-sonnet@20240620
  /-(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])$/, // older OpenAI: gpt-4-0613, gpt-3.5-turbo-1106 (MMDD)
  /-latest$/, // claude-3-5-sonnet-latest
  /-v\d+:\d+$/, // Bedrock: anthropic.claude-3-5-sonnet-20241022-v2:0 (then the date above)
];

/**
 * Lower case, trimmed; a provider prefix ("openai/", "anthropic.", "models/") dropped; then snapshot
 * suffixes dropped until none is left (Bedrock's "-v2:0" after a date). Fine-tuned models
 * ("ft:gpt-4o-mini-2024-07-18:org::id") keep their whole name: they are billed apart.
 */
export function modelKey(model: string): string {
  let m = model.trim().toLowerCase();
  if (m.startsWith('ft:')) return m;
  m = m.replace(/^(?:models\/|[a-z0-9_-]+\/)/, '').replace(/^(?:anthropic|openai|meta|mistral|cohere|amazon)\./, '');
  for (let changed = true; changed;) {
    changed = false;
    for (const suffix of SNAPSHOT_SUFFIXES) {
      const next = m.replace(suffix, '');
      if (next !== m && next.length > 0) {
        m = next;
        changed = true;
      }
    }
  }
  return m;
}
