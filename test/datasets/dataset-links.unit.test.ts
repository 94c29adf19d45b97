// The OTLP mapping of a trace's link to a dataset run item (ingest/mapping/dataset-links.ts;
// docs/otel-mapping.md): traceloom.dataset.run_id and traceloom.dataset.item_id, both UUIDs, on
// any span; one without the other, or a value that is not a UUID, links nothing and says why.
import { describe, expect, it } from 'vitest';
import { mapSpan } from '../../src/ingest/mapping/index.ts';
import { span } from '../helpers/spans.ts';

const RUN = '5D7A3C1E-0F00-4A00-8B00-0000000000AA';
const ITEM = '0b1c2d3e-4f50-4a00-8b00-0000000000bb';

describe('dataset run links in the OTLP mapping', () => {
  it('both attributes: the link, lower-cased, named in explain.mapped', () => {
    const m = mapSpan(span({ 'traceloom.dataset.run_id': RUN, 'traceloom.dataset.item_id': ITEM, 'gen_ai.operation.name': 'chat' }));
    expect(m.datasetLink).toEqual({ runId: RUN.toLowerCase(), itemId: ITEM });
    expect(m.explain.mapped.dataset_link).toBe('traceloom.dataset.run_id, traceloom.dataset.item_id');
    expect(m.spanClass).toBe('inference'); // the rest of the mapping is untouched
  });

  it('one without the other, or not a UUID: no link, and the reason', () => {
    const alone = mapSpan(span({ 'traceloom.dataset.run_id': RUN }));
    expect(alone.datasetLink).toBeUndefined();
    expect(alone.explain.ignored).toEqual([
      { key: 'traceloom.dataset.run_id', reason: 'no traceloom.dataset.item_id on the span: a link names both' },
    ]);
    const bad = mapSpan(span({ 'traceloom.dataset.run_id': 'run-7', 'traceloom.dataset.item_id': 42 }));
    expect(bad.datasetLink).toBeUndefined();
    expect(bad.explain.ignored).toEqual([
      { key: 'traceloom.dataset.run_id', reason: 'not a UUID: "run-7"' },
      { key: 'traceloom.dataset.item_id', reason: 'not a UUID: 42' },
    ]);
  });

  it('a span without them pays nothing and carries no link', () => {
    const m = mapSpan(span({ 'gen_ai.operation.name': 'chat' }));
    expect('datasetLink' in m).toBe(false);
  });
});
