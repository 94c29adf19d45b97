// Datasets and their items (docs/datasets.md): create, list (keyset pages), read, change, delete;
// items added one at a time, in a batch, from an execution (its input messages and its output), or
// imported (import.ts); an edit of an item's content is a new item version, an archive hides it
// from listings and new runs without touching the versions runs used. No Koa here.
import crypto from 'node:crypto';
import { badRequest, conflict, notFound, unprocessable } from '../errors.ts';
import type { NormalizedMessage } from '../executions/span.ts';
import type { DatasetRepository, DatasetRow, ItemContent, ItemRow, NewItem } from './dataset-repository.ts';

export const MAX_ITEMS_PER_REQUEST = 1_000;
const EXPORT_PAGE = 1_000;

export interface ItemInput extends ItemContent {
  source_trace_id?: string;
}

export interface ItemUpdate {
  input?: unknown;
  expected_output?: unknown;
  metadata?: Record<string, unknown>;
  archived?: boolean;
}

/** A keyset cursor: the last key of a page, opaque to callers. */
export const cursor = {
  encode: (key: string) => Buffer.from(JSON.stringify(['k', key])).toString('base64url'),
  decode(text: string | undefined, numeric = true): string | undefined {
    if (text === undefined) return undefined;
    try {
      const v = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as unknown;
      if (Array.isArray(v) && v[0] === 'k' && typeof v[1] === 'string' && (!numeric || /^\d{1,19}$/.test(v[1]))) return v[1];
    } catch {
      // below
    }
    throw badRequest('cursor: is not a cursor this endpoint gave');
  },
};

export function presentDataset(d: DatasetRow) {
  return {
    dataset_id: d.dataset_id,
    name: d.name,
    description: d.description,
    metadata: d.metadata,
    items: Number(d.items),
    created_at: d.created_at.toISOString(),
    updated_at: d.updated_at.toISOString(),
  };
}

export function presentItem(i: ItemRow) {
  return {
    item_id: i.item_id,
    dataset_id: i.dataset_id,
    version: i.version,
    input: i.input,
    expected_output: i.expected_output ?? null,
    metadata: i.metadata,
    source_trace_id: i.source_trace_id,
    archived: i.archived_at !== null,
    archived_at: i.archived_at?.toISOString() ?? null,
    created_at: i.created_at.toISOString(),
    updated_at: i.updated_at.toISOString(),
  };
}

export type DatasetItem = ReturnType<typeof presentItem>;

/** The execution an item is made from: its conversation (ExecutionRepository.get with messages). */
export interface ExecutionSource {
  get(projectId: string, traceId: string, includeMessages: true): Promise<{ conversation_history?: unknown[] } | undefined>;
}

/**
 * An execution's conversation as an item: the messages before its last assistant turn are the
 * input; that turn is the output (its text, or the whole message when it calls tools).
 */
export function itemFromConversation(messages: readonly NormalizedMessage[]): { input: NormalizedMessage[]; output: unknown } {
  let last = messages.length - 1;
  while (last >= 0 && messages[last]!.role !== 'assistant') last--;
  if (last < 0) return { input: [...messages], output: null };
  const answer = messages[last]!;
  const output = answer.tool_calls?.length ? answer : answer.content;
  return { input: messages.slice(0, last), output };
}

export function createDatasets(deps: {
  repository: DatasetRepository;
  executions: ExecutionSource;
  /** How many runs a dataset has (run-repository.ts count). */
  runCount(projectId: string, datasetId: string): Promise<number>;
}) {
  const repo = deps.repository;
  const newItem = (i: ItemInput): NewItem => ({ item_id: crypto.randomUUID(), ...i });

  return {
    async create(projectId: string, input: { name: string; description?: string; metadata?: Record<string, unknown> }) {
      return presentDataset(await repo.createDataset(projectId, crypto.randomUUID(), input));
    },

    async get(projectId: string, datasetId: string) {
      return presentDataset(await repo.getDataset(projectId, datasetId));
    },

    async list(projectId: string, q: { limit: number; cursor?: string }) {
      const rows = await repo.listDatasets(projectId, q.limit, cursor.decode(q.cursor, false));
      const last = rows[rows.length - 1];
      return { items: rows.map(presentDataset), next_cursor: rows.length === q.limit && last ? cursor.encode(last.name) : null };
    },

    async update(
      projectId: string,
      datasetId: string,
      input: { name?: string; description?: string | null; metadata?: Record<string, unknown> },
    ) {
      return presentDataset(await repo.updateDataset(projectId, datasetId, input));
    },

    /** Deletes a dataset and its items; one with runs is refused (a run is the record of an experiment: delete its runs first). */
    async remove(projectId: string, datasetId: string) {
      await repo.getDataset(projectId, datasetId);
      const runs = await deps.runCount(projectId, datasetId);
      if (runs > 0) throw conflict(`The dataset has ${runs} run${runs === 1 ? '' : 's'}: delete them first (DELETE …/runs/{run_id})`);
      await repo.deleteDataset(projectId, datasetId);
    },

    /** Adds items, all or none; the answer keeps the order sent. */
    async addItems(projectId: string, datasetId: string, items: readonly ItemInput[]) {
      if (items.length > MAX_ITEMS_PER_REQUEST)
        throw badRequest(`items: at most ${MAX_ITEMS_PER_REQUEST} in one request, got ${items.length}`);
      await repo.getDataset(projectId, datasetId);
      return (await repo.addItems(projectId, datasetId, items.map(newItem))).map(presentItem);
    },

    /** An item made from an execution in one call: its input messages and its output (docs/datasets.md). */
    async addFromExecution(
      projectId: string,
      datasetId: string,
      req: { trace_id: string; expected_output?: unknown; metadata?: Record<string, unknown> },
    ) {
      await repo.getDataset(projectId, datasetId);
      const e = await deps.executions.get(projectId, req.trace_id, true);
      if (!e) throw notFound('Execution');
      const messages = (e.conversation_history ?? []) as NormalizedMessage[];
      if (messages.length === 0) throw unprocessable(`trace_id: execution ${req.trace_id} holds no messages to make an item of`);
      const { input, output } = itemFromConversation(messages);
      const expected = req.expected_output !== undefined ? req.expected_output : output;
      const [item] = await repo.addItems(projectId, datasetId, [
        newItem({
          input,
          ...(expected !== null ? { expected_output: expected } : {}),
          metadata: req.metadata ?? {},
          source_trace_id: req.trace_id,
        }),
      ]);
      return presentItem(item!);
    },

    async getItem(projectId: string, datasetId: string, itemId: string) {
      return presentItem(await repo.getItem(projectId, datasetId, itemId));
    },

    async listItems(projectId: string, datasetId: string, q: { limit: number; cursor?: string; include_archived: boolean }) {
      await repo.getDataset(projectId, datasetId);
      const rows = await repo.listItems(projectId, datasetId, {
        limit: q.limit,
        afterSeq: cursor.decode(q.cursor),
        archived: q.include_archived,
      });
      const last = rows[rows.length - 1];
      return { items: rows.map(presentItem), next_cursor: rows.length === q.limit && last ? cursor.encode(last.seq) : null };
    },

    /** A content change makes the next version (the whole content: what is left out is cleared); `archived` alone writes none. */
    async updateItem(projectId: string, datasetId: string, itemId: string, u: ItemUpdate) {
      const touchesContent = u.input !== undefined || u.expected_output !== undefined || u.metadata !== undefined;
      if (touchesContent && u.input === undefined)
        throw badRequest('input: is required when the content changes (a version holds the whole content)');
      const content = touchesContent ? { input: u.input, expected_output: u.expected_output, metadata: u.metadata } : undefined;
      return presentItem(await repo.updateItem(projectId, datasetId, itemId, { content, archived: u.archived }));
    },

    async itemVersions(projectId: string, datasetId: string, itemId: string) {
      const rows = await repo.itemVersions(projectId, datasetId, itemId);
      return {
        items: rows.map((v) => ({
          version: v.version,
          input: v.input,
          expected_output: v.expected_output ?? null,
          metadata: v.metadata,
          created_at: v.created_at.toISOString(),
        })),
      };
    },

    /** Every item of a dataset in order, as JSON Lines text in chunks (keyset pages: flat memory). */
    async *exportLines(projectId: string, datasetId: string, includeArchived: boolean): AsyncGenerator<string> {
      let after: string | undefined;
      for (;;) {
        const rows = await repo.listItems(projectId, datasetId, { limit: EXPORT_PAGE, afterSeq: after, archived: includeArchived });
        let chunk = '';
        for (const r of rows) {
          const line = {
            item_id: r.item_id,
            version: r.version,
            input: r.input,
            expected_output: r.expected_output ?? null,
            metadata: r.metadata,
            source_trace_id: r.source_trace_id,
          };
          chunk += `${JSON.stringify(line)}\n`;
        }
        if (chunk) yield chunk;
        if (rows.length < EXPORT_PAGE) return;
        after = rows[rows.length - 1]!.seq;
      }
    },
  };
}

export type Datasets = ReturnType<typeof createDatasets>;
