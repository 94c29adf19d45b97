// Dataset import at scale (issues 28 and 39; docs/datasets.md, "Import and export"): N items sent as one
// JSON Lines request, generated as the request streams (the client holds one chunk at a time), and
// imported by the embedded service: items/s, and the service process's peak RSS above its level
// before the import (sampled every 50 ms) — the figure that shows memory stays bounded.
import { type Figure, startEmbeddedService } from './executions.ts';
import { formatCount } from './timing.ts';
import { removeDataDir } from './data-dir.ts';

const MiB = 2 ** 20;

export async function benchDatasetImport(items: number, label = 'items'): Promise<Figure[]> {
  const { svc, dir } = await startEmbeddedService('traceloom-bench-datasets-');
  const api = `${svc.url}/api/projects/default`;
  try {
    const made = await fetch(`${api}/datasets`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'bench-import' }),
    });
    const { dataset_id: id } = (await made.json()) as { dataset_id: string };
    const encoder = new TextEncoder();
    let next = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (next >= items) return controller.close();
        let chunk = '';
        for (let k = 0; k < 500 && next < items; k++, next++)
          chunk += `${JSON.stringify({
            input: [{ role: 'user', content: `Question ${next}: what is the capital of country number ${next % 197}, and why?` }],
            expected_output: `The capital of country ${next % 197} because of reason ${next % 13}.`,
            metadata: { case: next, split: next % 10 === 0 ? 'test' : 'train' },
          })}\n`;
        controller.enqueue(encoder.encode(chunk));
      },
    });
    global.gc?.();
    const baseRss = process.memoryUsage().rss;
    let peakRss = baseRss;
    const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 50);
    const t = performance.now();
    const r = await fetch(`${api}/datasets/${id}/items/import?import_id=bench`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-ndjson' },
      body,
      duplex: 'half',
    } as RequestInit);
    const answer = (await r.json()) as { imported: number; rejected_count: number; status: string; last_line: number };
    const s = (performance.now() - t) / 1000;
    clearInterval(sampler);
    if (r.status !== 200 || answer.imported !== items || answer.status !== 'completed' || answer.last_line !== items)
      throw new Error(`import: ${r.status} ${JSON.stringify(answer)}`);
    return [
      {
        what: `dataset import: ${formatCount(items)} ${label} as one JSON Lines stream`,
        value: `${formatCount(items / s)} ${label}/s (${s.toFixed(1)} s)`,
      },
      { what: 'dataset import: total time, request to answer', value: `${s.toFixed(1)} s` },
      {
        what: 'dataset import: peak RSS of the service process during the import (above its level before)',
        value: `+${Math.round((peakRss - baseRss) / MiB)} MiB (from ${Math.round(baseRss / MiB)} MiB)`,
      },
    ];
  } finally {
    await svc.close();
    removeDataDir(dir);
  }
}
