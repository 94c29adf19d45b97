// Every console page's first render on a project of `executions` executions (default 100,000; issue
// 43): the executions generated in the engine with users, sessions, tags, metadata and two prompt
// versions, two scores each, a prompt with labels, a dataset and one recorded conversation; then,
// in a real headless Chromium with the bundle cached, navigation start → the page's content drawn
// (its <main> holds text and no loading indicator), and the slowest API call the page made.
import { generateExecutions, startEmbeddedService, type Figure } from './executions.ts';
import { generateScores } from './quality.ts';
import { formatCount, quantile, waitUntil } from './timing.ts';
import { removeDataDir } from './data-dir.ts';
import { launchBrowser } from '../test/helpers/browser.ts';

/** The pages, as paths under /projects/default/. */
const PAGES: Array<[string, string]> = [
  ['executions list', 'executions'],
  ['execution (a recorded conversation)', 'executions/bench-conversation'],
  ['sessions', 'sessions'],
  ['a session (10 executions)', 'sessions/s-4207'],
  ['users', 'users'],
  ['prompts', 'prompts'],
  ['a prompt: versions', 'prompts/support'],
  ['a prompt: analytics', 'prompts/support?tab=analytics'],
  ['a prompt: compare', 'prompts/support?tab=compare'],
  ['spend', 'spend'],
  ['spend explorer', 'explorer'],
  ['budgets', 'budgets'],
  ['datasets', 'datasets'],
  ['a dataset', 'datasets/bench-dataset'],
  ['experiments', 'experiments'],
  ['evaluators', 'evaluators'],
  ['monitors', 'monitors'],
  ['playground', 'playground'],
  ['settings', 'settings'],
];

export async function benchConsolePages(executions: number, loads: number): Promise<Figure[]> {
  const figures: Figure[] = [];
  const { svc, dir } = await startEmbeddedService('traceloom-bench-console-pages-');
  const ch = svc.stores.clickhouse;
  const api = `${svc.url}/api/projects/default`;
  const call = async (method: string, url: string, body?: unknown) => {
    const r = await fetch(url, {
      method,
      headers: body ? { 'Content-Type': 'application/json' } : {},
      body: body ? JSON.stringify(body) : undefined,
    });
    if (r.status >= 300) throw new Error(`${method} ${url}: ${r.status} ${await r.text()}`);
    return r.json() as Promise<Record<string, unknown>>;
  };
  const browser = await launchBrowser();
  try {
    const t = performance.now();
    // Over the 90 days before now, so the pages' default windows (the last 24 hours … 30 days) hold data.
    const now = new Date().toISOString().slice(0, 19).replace('T', ' ');
    const startedAt = `toDateTime64('${now}', 3, 'UTC') - toIntervalMillisecond((number * 7919) % (90 * 86400000))`;
    await generateExecutions(ch, executions, { project: 'default', attribution: true, sessions: true, promptVersions: [6, 7], startedAt });
    await generateScores(ch, executions, { project: 'default', startedAt });
    await call('POST', `${api}/prompts`, { prompt_id: 'support', type: 'text', template: 'v1' });
    for (let v = 2; v <= 7; v++) await call('POST', `${api}/prompts/support/versions`, { template: `v${v}` });
    await call('PUT', `${api}/prompts/support/labels/production`, { version: 6 });
    await call('POST', `${api}/executions`, {
      trace_id: 'bench-conversation',
      provider: 'openai',
      model: 'gpt-4o-mini',
      session_id: 's-4207',
      user_id: 'user-84',
      conversation_history: [
        { role: 'system', content: 'You answer support questions.' },
        { role: 'user', content: 'Where is my order 1234?' },
        { role: 'assistant', content: 'It left the warehouse this morning.' },
      ],
      tokens_in: 30,
      tokens_out: 9,
    });
    const dataset = await call('POST', `${api}/datasets`, { name: 'bench-dataset' });
    const datasetId = String(dataset.dataset_id);
    await call(
      'POST',
      `${api}/datasets/${datasetId}/items`,
      Array.from({ length: 100 }, (_x, i) => ({ input: { question: `q${i}` }, expected_output: `a${i}` })),
    );
    await waitUntil(
      async () => Number((await ch.query<{ n: string }>('SELECT count() AS n FROM system.merges'))[0]!.n) === 0,
      600_000,
      1_000,
    );
    figures.push({
      what: `seeded: ${formatCount(executions)} executions and ${formatCount(executions * 2)} scores in one project, merges settled`,
      value: `${((performance.now() - t) / 1000).toFixed(1)} s`,
    });

    const { page } = browser;
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto(`${svc.url}/projects/default/executions`); // the bundle in the cache
    await page.locator('main').waitFor();
    for (const [what, rawPath] of PAGES) {
      const path = rawPath.replace('bench-dataset', encodeURIComponent(datasetId));
      const samples: number[] = [];
      let slowestApi = 0;
      for (let i = 0; i < loads; i++) {
        await page.goto(`${svc.url}/projects/default/${path}`);
        const drawn = await page.waitForFunction(
          () => {
            const main = document.querySelector('main');
            if (!main || (main.textContent ?? '').trim() === '' || main.querySelector('.loading, [aria-busy="true"]')) return false;
            return performance.now();
          },
          undefined,
          { polling: 'raf', timeout: 60_000 },
        );
        samples.push(Number(await drawn.jsonValue()));
        const apis = await page.evaluate(() =>
          performance
            .getEntriesByType('resource')
            .filter((r) => r.name.includes('/api/'))
            .map((r) => r.duration),
        );
        slowestApi = Math.max(slowestApi, quantile(apis.length ? apis : [0], 1));
      }
      figures.push({
        what: `${what} (/${rawPath.replace('bench-dataset', '{id}')}): first render p50 / max of ${loads}`,
        value: `${quantile(samples, 0.5).toFixed(0)} / ${Math.max(...samples).toFixed(0)} ms (slowest API call ${slowestApi.toFixed(0)} ms)`,
      });
    }
  } finally {
    await browser.close();
    await svc.close();
    removeDataDir(dir);
  }
  return figures;
}
