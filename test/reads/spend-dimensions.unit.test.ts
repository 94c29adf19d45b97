// The spend dimensions are one list (src/reads/spend-dimensions.ts): the API schema of
// breakdowns offers exactly its filters and names every dimension in group_by, and the rollup
// choice follows each entry (a dimension no rollup holds is read from the executions rows).
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SPEND_DIMENSIONS } from '../../src/reads/spend-dimensions.ts';
import { planOf, sourceOf } from '../../src/spend/breakdowns.ts';
import { API_SCHEMA_DIR } from '../../src/http/validation.ts';

const query = JSON.parse(fs.readFileSync(path.join(API_SCHEMA_DIR, 'SpendBreakdownQuery.json'), 'utf8')) as {
  properties: Record<string, { type: string; description?: string; items?: { type: string } }>;
};
const NOT_DIMENSIONS = ['group_by', 'scores'];

describe('spend dimensions', () => {
  it('the breakdown query schema has a filter per dimension and no other list parameter', () => {
    const lists = Object.entries(query.properties)
      .filter(([name, p]) => p.type === 'array' && !NOT_DIMENSIONS.includes(name))
      .map(([name]) => name)
      .sort();
    expect(lists).toEqual(SPEND_DIMENSIONS.map((d) => d.filter).sort());
    for (const d of SPEND_DIMENSIONS) expect(query.properties[d.filter]!.items?.type).toBe('string');
  });

  it('group_by names every dimension', () => {
    const text = query.properties.group_by!.description!;
    for (const d of SPEND_DIMENSIONS) expect(text, d.name).toMatch(new RegExp(`\\b${d.name}\\b`));
  });

  it('each dimension is read from its rollup, or from the executions rows when none holds it', () => {
    for (const d of SPEND_DIMENSIONS) {
      const grouped = sourceOf([{ kind: 'column', column: d.column }], { anyOf: {}, metadata: {} });
      expect(grouped, d.name).toBe(d.rollup ?? 'executions');
      const filtered = sourceOf([], { anyOf: { [d.column]: ['x'] }, metadata: {} });
      expect(filtered, d.name).toBe(d.rollup ?? 'executions');
    }
    // Two rollups of their own, or an array dimension filtered by several values ungrouped: the executions rows.
    expect(
      sourceOf(
        [
          { kind: 'column', column: 'tag' },
          { kind: 'column', column: 'api_key_id' },
        ],
        { anyOf: {}, metadata: {} },
      ),
    ).toBe('executions');
    expect(sourceOf([], { anyOf: { tag: ['a', 'b'] }, metadata: {} })).toBe('executions');
    expect(sourceOf([{ kind: 'column', column: 'agent_id' }], { anyOf: { api_key_id: ['k'] }, metadata: {} })).toBe('executions');
  });

  it('a rollup by grain serves every dimension but the session, alone and with the low-cardinality ones', () => {
    const window = { start: new Date('2026-08-03T00:00:00Z'), end: new Date('2026-11-01T00:00:00Z') };
    const none = { anyOf: {}, metadata: {} };
    for (const d of SPEND_DIMENSIONS.filter((x) => x.name !== 'session')) {
      const plan = planOf([{ kind: 'column', column: d.column }], none, window);
      expect(plan?.rollup.columns, d.name).toContain(d.column);
    }
    expect(planOf([{ kind: 'column', column: 'model' }], none, window)?.rollup.table).toBe('spend_by_dims');
    expect(planOf([{ kind: 'column', column: 'user_id' }], { anyOf: { model: ['m'] }, metadata: {} }, window)?.rollup.table).toBe(
      'spend_by_user_model',
    );
    expect(planOf([{ kind: 'column', column: 'tag' }], { anyOf: { agent_id: ['a'] }, metadata: {} }, window)?.rollup).toMatchObject({
      table: 'spend_by_attribute',
      attribute: 'tag',
    });
    expect(planOf([], { anyOf: { prompt_id: ['p'] }, metadata: {} }, window)?.rollup).toMatchObject({ attribute: 'prompt' });
    expect(planOf([{ kind: 'column', column: 'api_key_id' }], none, window)?.rollup).toMatchObject({ attribute: 'api_key' });
    // no family holds these: the hourly rollup or the executions rows
    expect(planOf([{ kind: 'column', column: 'session_id' }], none, window)).toBeUndefined();
    expect(planOf([{ kind: 'column', column: 'user_id' }], { anyOf: { tag: ['a'] }, metadata: {} }, window)).toBeUndefined();
    // one metadata key, grouped or filtered, with time alone: the family of metadata
    expect(planOf([{ kind: 'metadata', key: 'k' }], none, window)?.rollup).toMatchObject({ attribute: 'metadata' });
    expect(planOf([{ kind: 'time', bucket: 'day' }], { anyOf: {}, metadata: { k: 'v' } }, window)?.rollup).toMatchObject({
      attribute: 'metadata',
    });
    expect(planOf([{ kind: 'metadata', key: 'k' }], { anyOf: { model: ['m'] }, metadata: {} }, window)).toBeUndefined();
    expect(planOf([{ kind: 'metadata', key: 'k' }], { anyOf: {}, metadata: { j: 'v' } }, window)).toBeUndefined();
    expect(planOf([], { anyOf: {}, metadata: { k: '' } }, window)).toBeUndefined();
    expect(planOf([], { anyOf: { tag: ['a', 'b'] }, metadata: {} }, window)).toBeUndefined();
  });
});
