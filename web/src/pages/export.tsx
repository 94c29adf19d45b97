// Export buttons: GET .../executions/export with the same filters, downloaded with the credential.
import { useState } from 'preact/hooks';
import { download } from '../api.ts';
import { ErrorBox, useAction } from '../ui.tsx';

export function ExportButtons({ path, filters }: { path: string; filters: URLSearchParams }) {
  const [done, setDone] = useState('');
  const action = useAction(async (format: 'csv' | 'jsonl') => {
    const q = new URLSearchParams(filters);
    q.set('format', format);
    setDone('');
    setDone(`Downloaded ${await download(`${path}?${q}`)}`);
  });
  return (
    <div class="export">
      <span class="muted">Export</span>
      <button type="button" disabled={action.busy} onClick={() => action.run('csv')}>
        CSV
      </button>
      <button type="button" disabled={action.busy} onClick={() => action.run('jsonl')}>
        JSONL
      </button>
      {action.busy && <span class="muted">preparing…</span>}
      {done && !action.busy && <span class="muted">{done}</span>}
      <ErrorBox error={action.error} title="Export failed" />
    </div>
  );
}
