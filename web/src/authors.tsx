// Who did something, as a person reads it: the API records an API key's actions as
// `api_key:<key_id>`; the console shows that key's name (GET …/api-keys, read once per project and
// page load, any reader may list keys). A JWT subject, `dev` or `operator` is shown as it is; a key
// the list no longer has (another project's, say) stays as recorded.
import { enc } from './api.ts';
import type { ApiKey } from './types.ts';
import { useApi } from './ui.tsx';

const PREFIX = 'api_key:';

export function useKeyNames(projectId: string): Map<string, string> {
  const keys = useApi<{ items: ApiKey[] }>(`/api/projects/${enc(projectId)}/api-keys`);
  return new Map((keys.data?.items ?? []).map((k) => [k.key_id, k.name]));
}

/** The readable name of a recorded author: `API key "billing-agent"` for `api_key:<its id>`. */
export function authorName(author: string | null | undefined, names: ReadonlyMap<string, string>): string {
  if (!author) return '';
  if (!author.startsWith(PREFIX)) return author;
  const name = names.get(author.slice(PREFIX.length));
  return name === undefined ? author : `API key "${name}"`;
}

/** An author, by name, with what the API recorded in the title. */
export function Author({ id, names }: { id: string | null | undefined; names: ReadonlyMap<string, string> }) {
  if (!id) return null;
  return (
    <span class="author" title={id} data-author={id}>
      {authorName(id, names)}
    </span>
  );
}
