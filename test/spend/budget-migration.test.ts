// Migration 016 (one budget engine) moves the project's monthly budget in place: the budget with
// its webhook URL and signing secret, and every alert with its delivery record, become a budget of
// the engine and its ledger; `budgets` and `budget_alerts` stay readable (and `budgets` insertable)
// as views; a scoped project budget of the same month period can sit beside the monthly one.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.ts';
import { createStores, type Stores } from '../../src/stores/index.ts';
import { migrate, SCHEMA_DIR } from '../../src/stores/migrate.ts';
import { ensureProject } from '../../src/auth/project-repository.ts';
import { createBudgetStore } from '../../src/spend/budget-repository.ts';
import { dropTestDatabases, mode, tempDir, testEnv } from '../helpers/env.ts';

const logger = createLogger({ logLevel: 'silent' });
let s: Stores | undefined;
afterAll(async () => {
  await s?.close();
  await dropTestDatabases();
});

/** The schema as it was before migration 016. */
function schemaBefore016(): string {
  const dir = tempDir('traceloom-schema-');
  fs.cpSync(SCHEMA_DIR, dir, { recursive: true });
  for (const f of fs.readdirSync(path.join(dir, 'postgres'))) if (Number(f.slice(0, 3)) >= 16) fs.rmSync(path.join(dir, 'postgres', f));
  return dir;
}

describe(`migration 016: the monthly budget into the budget engine (${mode} mode)`, () => {
  it('keeps the budget, its secret and URL, and its alerts with their deliveries', async () => {
    s = await createStores((await testEnv({}, { migrated: false })).config, logger);
    await s.clickhouse.command('DROP TABLE IF EXISTS schema_migrations');
    await migrate(s, logger, schemaBefore016());
    const pg = s.postgres;
    await ensureProject(pg, 'old');
    await ensureProject(pg, 'none');
    await pg.query(
      `INSERT INTO budgets (project_id, budget_monthly_usd, alert_threshold_pct, enforcement_mode, webhook_url, webhook_secret)
       VALUES ('old', 10.5, 75, 'block', 'https://hooks.example.com/b', 'whsec_kept')`,
    );
    await pg.query(
      `INSERT INTO budget_alerts (project_id, month, kind, pct, spent_usd, budget_monthly_usd, alert_threshold_pct, webhook_url,
         delivery_attempts, last_status, delivered_at)
       VALUES ('old', '2026-10', 'threshold', 80, 8.4, 10.5, 75, 'https://hooks.example.com/b', 2, 200, now()),
              ('old', '2026-10', 'exceeded', 110, 11.55, 10.5, 75, 'https://hooks.example.com/b', 1, 500, NULL)`,
    );
    const scoped = await pg.query<{ budget_id: string }>(
      `INSERT INTO scoped_budgets (project_id, scope_kind, scope_value, period, amount_usd, thresholds_pct, enforcement_mode, webhook_format, webhook_secret)
       VALUES ('old', 'agent', 'a1', 'day', 1, '{50,100}', 'alert', 'signed', 'whsec_s') RETURNING budget_id::text AS budget_id`,
    );

    expect((await migrate(s, logger)).postgres).toContain(16);

    const store = createBudgetStore(pg);
    const monthly = await store.monthly('old');
    expect(monthly).toMatchObject({
      scope_kind: 'project',
      scope_value: '',
      period: 'month',
      surface: 'monthly',
      amount_usd: '10.500000000',
      thresholds_pct: [75],
      enforcement_mode: 'block',
      webhook_url: 'https://hooks.example.com/b',
      webhook_format: 'signed',
      webhook_secret: 'whsec_kept',
    });
    expect(await store.monthly('none')).toBeUndefined();
    const alerts = await store.alerts(monthly!.budget_id, 'newest');
    expect(
      alerts.map((a) => [a.period_start, a.kind, a.threshold_pct, a.pct, a.spent_usd, a.delivery_attempts, a.last_status]).sort(),
    ).toEqual([
      ['2026-10-01', 'exceeded', 75, '110', '11.550000000', 1, 500],
      ['2026-10-01', 'threshold', 75, '80', '8.400000000', 2, 200],
    ]);
    expect(alerts.find((a) => a.kind === 'threshold')!.delivered_at).toBeInstanceOf(Date);
    // The exceeded alert is still owed a delivery: the periodic evaluation re-enqueues it (created within 7 days).
    expect(await store.undelivered(4)).toEqual([alerts.find((a) => a.kind === 'exceeded')!.alert_id]);
    // The scoped budget is untouched and not the monthly surface.
    expect((await store.list('old', 'scoped')).map((b) => b.budget_id)).toEqual([scoped[0]!.budget_id]);

    // The old tables are views: read as before, and an INSERT into `budgets` replaces the monthly budget.
    expect(await pg.query(`SELECT month, kind, alert_threshold_pct FROM budget_alerts WHERE project_id = 'old' ORDER BY kind`)).toEqual([
      { month: '2026-10', kind: 'exceeded', alert_threshold_pct: 75 },
      { month: '2026-10', kind: 'threshold', alert_threshold_pct: 75 },
    ]);
    await pg.query(
      `INSERT INTO budgets (project_id, budget_monthly_usd, alert_threshold_pct, enforcement_mode, webhook_url, webhook_secret)
       VALUES ('old', 20, 90, 'alert', NULL, 'whsec_new')`,
    );
    expect(
      await pg.query(`SELECT budget_monthly_usd::text AS b, alert_threshold_pct, webhook_secret FROM budgets WHERE project_id = 'old'`),
    ).toEqual([{ b: '20.000000000', alert_threshold_pct: 90, webhook_secret: 'whsec_new' }]);
    expect((await store.monthly('old'))!.budget_id).toBe(monthly!.budget_id);

    // A scoped project budget of period month sits beside the monthly one (one per surface).
    const projectMonth = {
      kind: 'project' as const,
      value: '',
      period: 'month' as const,
      amountText: '5',
      thresholds: [100],
      mode: 'alert' as const,
      webhookUrl: null,
      format: 'signed' as const,
      secret: 'whsec_x',
    };
    expect(await store.create('old', projectMonth)).toMatchObject({ surface: 'scoped', period: 'month', scope_kind: 'project' });
    expect(await store.create('old', projectMonth)).toBeUndefined(); // one per scope, period and surface
  });
});
