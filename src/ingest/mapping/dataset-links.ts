// The link of a trace to the dataset item it ran in an experiment run (docs/datasets.md, "Linking
// through span attributes"; docs/otel-mapping.md): `traceloom.dataset.run_id` and
// `traceloom.dataset.item_id` on any span of the trace, both UUIDs as the API gave them. A span
// with one and not the other, or a value that is not a UUID, links nothing and says why.
import { asStr, preview, type SpanCtx } from './context.ts';
import { DATASET_ITEM_KEY, DATASET_RUN_KEY } from './keys.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function mapDatasetLink(ctx: SpanCtx): { runId: string; itemId: string } | undefined {
  const run = ctx.a[DATASET_RUN_KEY];
  const item = ctx.a[DATASET_ITEM_KEY];
  const runId = asStr(run)?.trim();
  const itemId = asStr(item)?.trim();
  let ok = true;
  for (const [key, raw, id, other] of [
    [DATASET_RUN_KEY, run, runId, DATASET_ITEM_KEY],
    [DATASET_ITEM_KEY, item, itemId, DATASET_RUN_KEY],
  ] as const) {
    if (raw === undefined) continue;
    if (!id || !UUID.test(id)) {
      ctx.ignore(key, `not a UUID: ${preview(raw)}`);
      ok = false;
    } else if (ctx.a[other] === undefined) {
      ctx.ignore(key, `no ${other} on the span: a link names both`);
      ok = false;
    }
  }
  if (!ok || !runId || !itemId) return undefined;
  ctx.map('dataset_link', `${DATASET_RUN_KEY}, ${DATASET_ITEM_KEY}`);
  return { runId: runId.toLowerCase(), itemId: itemId.toLowerCase() };
}
