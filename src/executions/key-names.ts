// The name of the API key that sent each execution (`api_key_name`), beside its `api_key_id`: the
// names live in PostgreSQL (api_keys), the executions in ClickHouse, so a page of executions asks
// for the names of its distinct key ids in one lookup scoped to the project.

/** key_id → name of the project's keys, revoked and expired ones included (auth/api-key-repository.ts apiKeyNames). */
export type KeyNames = (projectId: string, keyIds: readonly string[]) => Promise<Map<string, string>>;

/**
 * Each item with `api_key_name`: null when no key sent it, or the key was deleted since (a
 * revoked key keeps its name). One lookup for the whole page, none when no item has a key.
 */
export async function withKeyNames<T extends { api_key_id: string | null }>(
  keyNames: KeyNames,
  projectId: string,
  items: readonly T[],
): Promise<Array<T & { api_key_name: string | null }>> {
  // PostgreSQL answers uuids in lower case; a stored id may have come in another.
  const idOf = (item: T) => item.api_key_id?.toLowerCase() || null;
  const ids = [...new Set(items.map(idOf).filter((id): id is string => id !== null))];
  const names = ids.length ? await keyNames(projectId, ids) : new Map<string, string>();
  return items.map((item) => {
    const id = idOf(item);
    return { ...item, api_key_name: id ? (names.get(id) ?? null) : null };
  });
}
