// Values of a conversation as they read: text as text, JSON (an object, or a string that holds
// one, as tool arguments and span attributes mostly are) pretty-printed in a block that folds,
// open when short; and chat messages by role, their tool calls with name and arguments.
import { Badge } from '../ui.tsx';

/** JSON above this many lines starts folded. */
const OPEN_LINES = 14;

/** An object or array, or a string that holds one; undefined for anything else. */
export function asJson(v: unknown): object | undefined {
  if (v !== null && typeof v === 'object') return v;
  if (typeof v !== 'string') return undefined;
  const t = v.trim();
  if (!(t.startsWith('{') && t.endsWith('}')) && !(t.startsWith('[') && t.endsWith(']'))) return undefined;
  try {
    const parsed: unknown = JSON.parse(t);
    return parsed !== null && typeof parsed === 'object' ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** What a folded block holds: its keys, or its length. */
function preview(v: object): string {
  if (Array.isArray(v)) return `${v.length} item${v.length === 1 ? '' : 's'}`;
  const keys = Object.keys(v);
  const shown = keys.slice(0, 4).join(', ');
  return keys.length === 0 ? 'empty' : `{ ${shown}${keys.length > 4 ? `, … ${keys.length - 4} more` : ''} }`;
}

/** Pretty JSON in a <details> block: open when short, folded with a preview when long. */
export function JsonBlock({ value, label = 'JSON', open }: { value: object; label?: string; open?: boolean }) {
  const pretty = JSON.stringify(value, null, 2);
  const lines = pretty.split('\n').length;
  return (
    <details class="json-block" open={open ?? lines <= OPEN_LINES} data-lines={lines}>
      <summary>
        <span class="json-label">{label}</span> <span class="muted">{preview(value)}</span>
        {lines > OPEN_LINES && <span class="muted small"> · {lines} lines</span>}
      </summary>
      <pre class="json">{pretty}</pre>
    </details>
  );
}

/** Any value: JSON as a folding block, text as text, nothing as a dash. */
export function Value({ value, label }: { value: unknown; label?: string }) {
  if (value === null || value === undefined || value === '') return <span class="muted">—</span>;
  const json = asJson(value);
  if (json) return <JsonBlock value={json} label={label} />;
  return <div class="text-value">{String(value)}</div>;
}

export interface ChatMessage {
  role?: string;
  content?: unknown;
  tool_calls?: Array<{ id?: string; name?: string; arguments?: unknown }>;
  tool_call_id?: string;
  name?: string;
}

/** One chat message: its role, its text, its tool calls (name and arguments). */
export function MessageView({ m }: { m: ChatMessage }) {
  const role = m.role ?? 'message';
  return (
    <div class={`message-view role-${role}`} data-role={role}>
      <div class="meta">
        <Badge kind={`role-${role}`}>{role}</Badge>
        {m.name && <strong>{m.name}</strong>}
        {m.tool_call_id && <span class="muted mono small">{m.tool_call_id}</span>}
      </div>
      {m.content !== undefined && m.content !== null && m.content !== '' && <Value value={m.content} label="content" />}
      {(m.tool_calls ?? []).map((c) => (
        <div class="tool-call" data-tool-call={c.name}>
          <div class="meta">
            <Badge kind="tool">tool call</Badge> <strong>{c.name ?? 'unknown tool'}</strong> <span class="muted mono small">{c.id}</span>
          </div>
          <Value value={c.arguments} label="arguments" />
        </div>
      ))}
    </div>
  );
}
