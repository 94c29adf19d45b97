// Concurrent edits of one item (issue 39, defect 7): each PATCH answers the version it wrote, read
// in its own transaction under the item's row lock, never a later request's. Five PATCHes at once
// must each get a distinct version holding the content that request sent.
import { describe, expect, it } from 'vitest';
import { mode } from '../helpers/env.ts';
import { jsonCaller, serviceForFile } from '../helpers/service.ts';

const svc = serviceForFile();
const call = jsonCaller(() => `${svc().url}/api/projects/default`);

describe(`concurrent item edits (${mode} mode)`, () => {
  it('five parallel PATCHes each answer the version they wrote, with the content they sent', async () => {
    const dataset = (await call('POST', '/datasets', { name: 'edits' })).body.dataset_id as string;
    const item = await call('POST', `/datasets/${dataset}/items`, { input: 'v1' });
    expect(item.status).toBe(201);
    const path = `/datasets/${dataset}/items/${item.body.item_id}`;

    for (let round = 0; round < 3; round++) {
      const sent = [0, 1, 2, 3, 4].map((i) => ({ input: `round ${round} edit ${i}`, metadata: { edit: i } }));
      const answers = await Promise.all(sent.map((body) => call('PATCH', path, body)));
      for (const [i, a] of answers.entries()) {
        expect(a.status, JSON.stringify(a.body)).toBe(200);
        // The answer is what this request wrote: its content at the version it made.
        expect(a.body.input).toBe(sent[i]!.input);
        expect(a.body.metadata).toEqual(sent[i]!.metadata);
      }
      const versions = answers.map((a) => a.body.version as number);
      expect(new Set(versions).size).toBe(5);
      const first = 2 + round * 5;
      expect([...versions].sort((a, b) => a - b)).toEqual([first, first + 1, first + 2, first + 3, first + 4]);
      // And the stored version of each number is the one its request answered.
      const stored = (await call('GET', `${path}/versions`)).body.items as Array<{ version: number; input: string }>;
      for (const a of answers) expect(stored.find((v) => v.version === a.body.version)?.input).toBe(a.body.input);
    }
  });
});
