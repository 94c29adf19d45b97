// The search box: a trace id opens that execution (its page says so when the project has none).
import { useState } from 'preact/hooks';
import { enc } from '../api.ts';
import { navigate } from '../router.tsx';
import { Form } from '../ui.tsx';

export function TraceSearch({ projectId }: { projectId: string }) {
  const [id, setId] = useState('');
  return (
    <Form
      class="trace-search"
      onSubmit={() => {
        const traceId = id.trim();
        if (!traceId) return;
        setId('');
        navigate(`/projects/${enc(projectId)}/executions/${enc(traceId)}`);
      }}
    >
      <input
        name="trace_search"
        type="search"
        placeholder="Go to trace id…"
        aria-label="Go to a trace id"
        value={id}
        onInput={(e) => setId((e.target as HTMLInputElement).value)}
      />
    </Form>
  );
}
