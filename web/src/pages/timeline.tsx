// The chat and tool timeline (GET .../timeline): messages in conversation order, as text by
// role; tool calls (name, arguments) and their results as separate events, or joined one card per
// tool with "compact tools". JSON arguments and results are pretty-printed and fold (rendered.tsx).
import { clock, duration, instant, localOffset, utc } from '../format.ts';
import { navigate, useLocation, withParams } from '../router.tsx';
import type { TimelineEvent } from '../types.ts';
import { Badge, Card, Empty, Load, useApi } from '../ui.tsx';
import { Value } from './rendered.tsx';

export function Timeline({ path }: { path: string }) {
  const loc = useLocation();
  const compact = loc.params.get('compact') === 'true';
  const timeline = useApi<{ trace_id: string; events: TimelineEvent[] }>(`${path}?compact_tools=${compact}`);
  return (
    <Card
      title="Conversation"
      actions={
        <label class="toggle">
          <input
            type="checkbox"
            name="compact_tools"
            checked={compact}
            onChange={(e) =>
              navigate(withParams(loc, { compact: (e.target as HTMLInputElement).checked ? 'true' : null }), { replace: true })
            }
          />
          Compact tools (each call with its result)
        </label>
      }
    >
      <Load state={timeline} label="Loading the timeline…">
        {(t) =>
          t.events.length === 0 ? (
            <Empty title="No messages recorded">
              <p>
                The spans of this execution carried no message content (many SDKs send content only when content capture is on, e.g.
                OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true).
              </p>
            </Empty>
          ) : (
            <ol class="timeline">
              {t.events.map((e) => (
                <Event e={e} />
              ))}
            </ol>
          )
        }
      </Load>
    </Card>
  );
}

function When({ e }: { e: TimelineEvent }) {
  if (!e.timestamp) return null;
  // The time of day on the console's clock, its zone after it; the date in UTC on hover.
  const zone = clock() === 'utc' ? 'UTC' : localOffset(new Date(e.timestamp));
  return (
    <time dateTime={e.timestamp} title={`${utc(e.timestamp)} UTC`}>
      {instant(e.timestamp).slice(11)} <span class="zone">{zone}</span>
    </time>
  );
}

function Event({ e }: { e: TimelineEvent }) {
  if (e.type === 'message') {
    return (
      <li class={`event message role-${e.role}`} data-type="message">
        <div class="meta">
          <Badge kind={`role-${e.role}`}>{e.role}</Badge> <When e={e} />
        </div>
        <div class="content">
          <Value value={e.content} label="content" />
        </div>
      </li>
    );
  }
  const isError = e.is_error === true;
  const title = (
    <div class="meta">
      <Badge kind="tool">{e.type === 'tool_result' ? 'tool result' : e.type === 'tool_call' ? 'tool call' : 'tool'}</Badge>{' '}
      <strong>{e.name ?? 'unknown tool'}</strong> <span class="muted mono">{e.call_id}</span> {isError && <Badge kind="bad">error</Badge>}{' '}
      {e.duration_ms !== undefined && <span class="muted">{duration(e.duration_ms)}</span>} <When e={e} />
    </div>
  );
  return (
    <li class={`event tool ${isError ? 'is-error' : ''}`} data-type={e.type}>
      {title}
      {(e.type === 'tool_call' || e.type === 'tool') && (
        <div class="io">
          <span class="muted">arguments</span>
          <Value value={e.arguments} label="JSON" />
        </div>
      )}
      {(e.type === 'tool_result' || e.type === 'tool') && (
        <div class="io">
          <span class="muted">result</span>
          <Value value={e.type === 'tool' ? e.result : e.content} label="JSON" />
        </div>
      )}
    </li>
  );
}
