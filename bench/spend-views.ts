// What the spend rollups cost each write of executions: inserts of 2,000 executions (a loader
// batch's size), in time order, through the views as migrated (the rollups by grain of 018 and 021,
// the prompt days of 023, the metadata pairs of 025, the user days of 026, without the hourly
// views by tag, API key and prompt and the daily ones that 019, 021 and 022 retired), alternating
// with: the same without the user days; the view of 021 in place of 025's (no metadata pairs, no
// user days); the write path of 020 (the views of 018 by tag, prompt and API key, the hourly one by
// prompt and the daily ones, re-created from their migrations, in place of 021's and 023's); and
// the one before 018 (the three hourly views and the daily ones re-created, the rollups by grain
// and the prompt days detached): the raw figures of the same run. Prints µs per execution per arm.
// Env: BENCH_VIEWS_ROUNDS (default 3), BENCH_VIEWS_BATCHES (per round and side, default 100).
import fs from 'node:fs';
import { SPEND_ROLLUPS } from '../src/reads/spend-dimensions.ts';
import { generateExecutions, startEmbeddedService } from './executions.ts';
import { removeDataDir } from './data-dir.ts';

const BATCH = 2_000;

export async function benchSpendViews(): Promise<Array<[string, string]>> {
  const rounds = Number(process.env.BENCH_VIEWS_ROUNDS ?? 3);
  const batches = Number(process.env.BENCH_VIEWS_BATCHES ?? 100);
  const { svc, dir } = await startEmbeddedService('traceloom-bench-views-');
  const ch = svc.stores.clickhouse;
  // The views retired since 018, re-created from their migrations and kept detached but in the arm that has them.
  const hourly = ['spend_hourly_tags_mv', 'spend_hourly_api_keys_mv', 'spend_hourly_prompts_mv'];
  const families = ['spend_by_tag_mv', 'spend_by_prompt_mv', 'spend_by_api_key_mv'];
  const daily = ['daily_spend_mv', 'daily_prompt_spend_mv'];
  for (const file of ['001_executions.sql', '006_spend_rollups.sql', '008_spend_api_keys.sql', '018_spend_grains.sql']) {
    const ddl = fs.readFileSync(new URL(`../schema/clickhouse/${file}`, import.meta.url), 'utf8');
    for (const statement of ddl.split(/;\s*\n/))
      if ([...hourly, ...families, ...daily].some((v) => statement.includes(`VIEW IF NOT EXISTS ${v} `)))
        await ch.command(statement.replace(/^(--.*\n)+/, ''));
  }
  // The view of 021 (tags, prompts and API keys, without 025's metadata pairs), beside 025's.
  const at021 = 'spend_by_attribute_021_mv';
  const ddl021 = fs.readFileSync(new URL('../schema/clickhouse/021_one_attribute_rollup.sql', import.meta.url), 'utf8');
  const view021 = ddl021.split(/;\s*\n/).find((st) => st.includes('VIEW IF NOT EXISTS spend_by_attribute_mv '))!;
  await ch.command(view021.replace(/^(--.*\n)+/, '').replace('spend_by_attribute_mv ', `${at021} `));
  for (const v of [...hourly, ...families, ...daily, at021]) await ch.command(`DETACH TABLE ${v}`);
  const grains = [...new Set(SPEND_ROLLUPS.map((r) => `${r.table}_mv`))];
  const arms: Array<[string, { detach: string[]; attach: string[] }]> = [
    ['as migrated (018 to 026)', { detach: [], attach: [] }],
    ['as at 025 (no user days)', { detach: ['user_days_mv'], attach: [] }],
    ['as at 024 (no metadata pairs)', { detach: ['spend_by_attribute_mv', 'user_days_mv'], attach: [at021] }],
    [
      'as at 020',
      {
        detach: ['spend_by_attribute_mv', 'prompt_version_days_mv', 'user_days_mv'],
        attach: [...families, 'spend_hourly_prompts_mv', ...daily],
      },
    ],
    ['as before 018', { detach: [...grains, 'prompt_version_days_mv', 'user_days_mv'], attach: [...hourly, ...daily] }],
  ];
  const figures: Array<[string, string]> = [];
  let next = 0;
  // Each batch spans a few seconds of one day, as a loader's batch does.
  const write = async () => {
    const t = performance.now();
    for (let b = 0; b < batches; b++) {
      await generateExecutions(ch, BATCH, {
        project: 'default',
        attribution: true,
        sessions: true,
        from: next,
        startedAt: `toDateTime64('2026-10-01 00:00:00', 3, 'UTC') + toIntervalMillisecond(number * 50)`,
        userId: "concat('user-', toString((number * 7919) % 100000))",
      });
      next += BATCH;
    }
    return ((performance.now() - t) * 1000) / (batches * BATCH);
  };
  try {
    await write(); // warm-up: first parts, caches
    const totals = arms.map(() => 0);
    for (let round = 1; round <= rounds; round++) {
      const figures_: string[] = [];
      for (const [a, [, arm]] of arms.entries()) {
        for (const v of arm.detach) await ch.command(`DETACH TABLE ${v}`);
        for (const v of arm.attach) await ch.command(`ATTACH TABLE ${v}`);
        const us = await write();
        for (const v of arm.attach) await ch.command(`DETACH TABLE ${v}`);
        for (const v of arm.detach) await ch.command(`ATTACH TABLE ${v}`);
        totals[a]! += us;
        figures_.push(us.toFixed(1));
      }
      figures.push([`round ${round}: µs per execution, ${arms.map(([name]) => name).join(' / ')}`, figures_.join(' / ')]);
    }
    figures.push([
      `mean of ${rounds} rounds (${batches} inserts of ${BATCH.toLocaleString('en-US')} executions per arm)`,
      arms.map(([name], a) => `${name}: ${(totals[a]! / rounds).toFixed(1)} µs`).join('; '),
    ]);
  } finally {
    await svc.close();
    removeDataDir(dir);
  }
  return figures;
}
