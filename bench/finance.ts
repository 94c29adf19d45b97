// Finance over a large tenant (issue 44, for bench/tenant.ts with BENCH_TENANT_FINANCE=1, the
// default): an invoice of one month imported (a generic CSV made from our own spend by day and
// model, every 7th line off by a cent), then the month's reconciliation (JSON and the Parquet
// report) and the chargeback statement by user, tag, agent and API key, p50 / p95 over HTTP, with
// the rows of the month the executions' reads scan.
import type { Service } from '../src/service.ts';
import { fromScaled, toScaled } from '../src/decimal.ts';
import { quantile, timeEach } from './timing.ts';

export interface Figure {
  what: string;
  value: string;
}

const ms = (n: number) => n.toFixed(0);

export async function timeFinance(svc: Service, month: string, samples: number): Promise<Figure[]> {
  const api = `${svc.url}/api/projects/default`;
  const [y, m] = month.split('-').map(Number) as [number, number];
  const start = new Date(Date.UTC(y, m - 1, 1)).toISOString();
  const end = new Date(Date.UTC(y, m, 1)).toISOString();
  // A step after the first finds the invoice of the step before: replaced by one of the data now.
  const listed = (await (await fetch(`${api}/invoices`)).json()) as { invoices: Array<{ invoice_id: string }> };
  for (const i of listed.invoices) await fetch(`${api}/invoices/${i.invoice_id}`, { method: 'DELETE' });
  const spend = (await (await fetch(`${api}/spend?group_by=day,model&start=${start}&end=${end}&limit=10000`)).json()) as {
    rows: Array<{ day: string; model: string; cost_usd: string }>;
  };
  const csv = [
    'date,model,cost',
    ...spend.rows.map(
      (r, i) => `${r.day.slice(0, 10)},${r.model},${i % 7 === 0 ? fromScaled(toScaled(r.cost_usd, 9) + 10_000_000n, 9) : r.cost_usd}`,
    ),
  ].join('\n');
  const t0 = performance.now();
  const imported = await fetch(`${api}/invoices?provider=bench`, { method: 'POST', headers: { 'Content-Type': 'text/csv' }, body: csv });
  if (imported.status !== 201) throw new Error(`invoice import: ${imported.status} ${await imported.text()}`);
  const figures: Figure[] = [{ what: `invoice import (${spend.rows.length} lines)`, value: `${ms(performance.now() - t0)} ms` }];
  const [inMonth] = await svc.stores.clickhouse.query<{ n: string }>(
    `SELECT toString(count()) AS n FROM executions WHERE project_id = 'default'
       AND started_at >= toDateTime64({s:String}, 3, 'UTC') AND started_at < toDateTime64({e:String}, 3, 'UTC')`,
    { s: start.slice(0, 19).replace('T', ' '), e: end.slice(0, 19).replace('T', ' ') },
  );
  const timed = async (what: string, path: string) => {
    let body = '';
    const get = async () => {
      const r = await fetch(`${api}${path}`);
      body = path.includes('format=parquet') ? String((await r.arrayBuffer()).byteLength) : await r.text();
      if (r.status !== 200) throw new Error(`${path}: ${r.status} ${body}`);
    };
    await get();
    const { samples: t } = await timeEach(samples, get);
    figures.push({ what, value: `${ms(quantile(t, 0.5))} / ${ms(quantile(t, 0.95))}` });
    return body;
  };
  const report = JSON.parse(
    await timed(`reconciliation of ${month} (${inMonth!.n} executions in it)`, `/reconciliation?month=${month}`),
  ) as {
    totals: { rows: number; explained: number; unexplained: number; difference_usd: string };
  };
  figures.push({
    what: `reconciliation of ${month}: rows, unexplained, difference`,
    value: `${report.totals.rows} rows, ${report.totals.unexplained} unexplained, $${report.totals.difference_usd}`,
  });
  await timed(`reconciliation report of ${month}, Parquet`, `/reconciliation?month=${month}&format=parquet`);
  for (const by of ['user', 'tag', 'agent', 'api_key']) {
    const s = JSON.parse(await timed(`statement of ${month} by ${by}`, `/statements?month=${month}&by=${by}`)) as {
      lines: unknown[];
      lines_total_usd: string;
      total: { cost_usd: string };
    };
    figures.push({
      what: `statement of ${month} by ${by}: lines, balanced`,
      value: `${s.lines.length} lines, ${s.lines_total_usd === s.total.cost_usd ? 'exact' : `DIFFERS: ${s.lines_total_usd} vs ${s.total.cost_usd}`}`,
    });
  }
  return figures;
}
