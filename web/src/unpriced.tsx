// A cost the API could not compute: the model has no price (cost_source `unpriced`, counted at $0,
// never a guess). Shown as "unpriced", linking to the prices in Settings, never as "$0.00": the
// call was not free, its cost is unknown.
import { enc } from './api.ts';
import { Link } from './router.tsx';

export function Unpriced({ projectId, count }: { projectId: string; count?: number }) {
  return (
    <Link
      href={`/projects/${enc(projectId)}/settings#prices`}
      class="unpriced"
      title="No price for this model: its calls count at $0. Set a project price in Settings, then reprice."
    >
      {count === undefined ? 'unpriced' : `${count.toLocaleString('en-US')} unpriced`}
    </Link>
  );
}
