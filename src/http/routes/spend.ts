// Spend routes: stats, template analytics, budget, budget check, retention. Thin: the route table
// validates; the spend domain does the work (docs/spend.md).
import type { Domain } from '../../compose/domain.ts';
import type { BudgetInput } from '../../spend/budgets.ts';
import type { AnalyticsQuery } from '../../spend/analytics-repository.ts';
import type { WindowQuery } from '../../spend/stats.ts';
import type { BreakdownQuery } from '../../spend/breakdowns.ts';
import type { RepriceInput } from '../../spend/reprice.ts';
import type { CheckQuery } from '../../spend/scoped-budgets.ts';
import { apiKeyIdOf } from '../../auth/principal.ts';
import type { RouteDef } from './types.ts';

const P = '/api/projects/:project_id';
const tag = 'spend';

export function spendRoutes(domain: Domain): RouteDef[] {
  const { stats, analytics, budgets, retention, breakdowns } = domain.spend;
  return [
    {
      method: 'GET',
      path: `${P}/spend`,
      operationId: 'getSpendBreakdown',
      tag,
      access: 'authenticated',
      need: 'read',
      query: 'SpendBreakdownQuery',
      summary:
        'Spend grouped by time, provider, model, agent, user, session, tag, prompt or metadata.<key>, each also a filter; costliest first, the rest in `other`',
      responses: { 200: { description: 'The breakdown', schema: 'SpendBreakdown' } },
      async handler(ctx) {
        ctx.body = await breakdowns.breakdown(ctx.state.projectId!, ctx.state.query as BreakdownQuery);
      },
    },
    {
      method: 'GET',
      path: `${P}/stats`,
      operationId: 'getProjectStats',
      tag,
      access: 'authenticated',
      need: 'read',
      query: 'StatsQuery',
      summary: 'Spend of the project over whole UTC days (default: the last 30), from the daily rollups',
      responses: { 200: { description: 'Stats', schema: 'ProjectStats' } },
      async handler(ctx) {
        ctx.body = await stats.project(ctx.state.projectId!, ctx.state.query as WindowQuery);
      },
    },
    {
      method: 'GET',
      path: `${P}/prompts/:prompt_id/analytics`,
      operationId: 'getPromptAnalytics',
      tag,
      access: 'authenticated',
      need: 'read',
      query: 'PromptAnalyticsQuery',
      summary: 'Executions, cost, latency and tokens of one prompt, by version and by day (pre-aggregated)',
      responses: { 200: { description: 'Analytics', schema: 'PromptAnalytics' }, 404: { description: 'No such prompt', schema: 'Error' } },
      async handler(ctx) {
        await domain.prompts.get(ctx.state.projectId!, ctx.params.prompt_id!); // 404 for a prompt that is not the project's
        ctx.body = await analytics.prompt(ctx.state.projectId!, ctx.params.prompt_id!, ctx.state.query as AnalyticsQuery);
      },
    },
    {
      method: 'GET',
      path: `${P}/budget`,
      operationId: 'getBudget',
      tag,
      access: 'authenticated',
      need: 'read',
      summary: 'The budget with month-to-date spend, status and alerts (budget_monthly_usd null when none is set)',
      responses: { 200: { description: 'The budget', schema: 'Budget' } },
      async handler(ctx) {
        const admin = ctx.state.principal?.projects.get(ctx.state.projectId!) === 'admin';
        ctx.body = await budgets.get(ctx.state.projectId!, admin);
      },
    },
    {
      method: 'PUT',
      path: `${P}/budget`,
      operationId: 'setBudget',
      tag,
      access: 'authenticated',
      need: 'admin',
      body: 'BudgetSet',
      summary: 'Set the monthly budget (admin); the first answer carries the webhook signing secret',
      responses: { 200: { description: 'The budget', schema: 'Budget' } },
      async handler(ctx) {
        ctx.body = await budgets.put(ctx.state.projectId!, ctx.state.body as BudgetInput);
      },
    },
    {
      method: 'GET',
      path: `${P}/budget/check`,
      operationId: 'checkBudget',
      tag,
      access: 'authenticated',
      need: 'read',
      ingest: true,
      query: 'BudgetCheckQuery',
      summary:
        'Pre-flight check before an LLM call, for the project budget and every scoped budget that applies (agent_id, user_id, tag, api_key_id, and the calling API key): answered from memory or Redis (ingest keys allowed)',
      responses: { 200: { description: 'Whether calls are allowed', schema: 'BudgetCheck' } },
      async handler(ctx) {
        const [project, scoped] = await Promise.all([
          budgets.check(ctx.state.projectId!),
          // A caller with an API key gets its key's budgets without asking.
          domain.spend.scopedBudgets.check(ctx.state.projectId!, ctx.state.query as CheckQuery, apiKeyIdOf(ctx.state.principal)),
        ]);
        ctx.body = { ...project, allowed: project.allowed && scoped.every((b) => b.allowed), budgets: scoped };
      },
    },
    {
      method: 'POST',
      path: `${P}/reprice`,
      operationId: 'reprice',
      tag,
      access: 'authenticated',
      need: 'admin',
      body: 'RepriceRequest',
      summary:
        'Price executions again (admin): direct records from their usage, OTLP executions by assembling their traces again; ' +
        'dry_run counts what would change; otherwise a job rewrites them as corrections',
      responses: {
        200: { description: 'Dry run: what would change', schema: 'RepriceDryRun' },
        202: { description: 'The job, queued (progress at GET .../reprice/{id})', schema: 'RepriceJob' },
        409: { description: 'A repricing job of the project is unfinished', schema: 'Error' },
      },
      async handler(ctx) {
        const input = ctx.state.body as RepriceInput;
        if (input.dry_run) {
          ctx.body = await domain.reprice.dryRun(ctx.state.projectId!, input);
          return;
        }
        ctx.status = 202;
        ctx.body = await domain.reprice.start(ctx.state.projectId!, input, ctx.state.principal?.userId ?? 'unknown');
      },
    },
    {
      method: 'GET',
      path: `${P}/reprice/:reprice_id`,
      operationId: 'getRepriceJob',
      tag,
      access: 'authenticated',
      need: 'admin',
      summary: 'Progress of a repricing job (admin)',
      responses: {
        200: { description: 'The job', schema: 'RepriceJob' },
        404: { description: 'No such job in this project', schema: 'Error' },
      },
      async handler(ctx) {
        ctx.body = await domain.reprice.get(ctx.state.projectId!, ctx.params.reprice_id!);
      },
    },
    {
      method: 'GET',
      path: `${P}/retention`,
      operationId: 'getRetention',
      tag,
      access: 'authenticated',
      need: 'read',
      summary: 'Raw-data retention of the project (days: null keeps everything)',
      responses: { 200: { description: 'Retention', schema: 'Retention' } },
      async handler(ctx) {
        ctx.body = await retention.get(ctx.state.projectId!);
      },
    },
    {
      method: 'PUT',
      path: `${P}/retention`,
      operationId: 'setRetention',
      tag,
      access: 'authenticated',
      need: 'admin',
      body: 'RetentionSet',
      summary: 'Set raw-data retention (admin): spans and executions older than N days go; daily spend stays',
      responses: { 200: { description: 'Retention', schema: 'Retention' } },
      async handler(ctx) {
        ctx.body = await retention.put(ctx.state.projectId!, (ctx.state.body as { days: number | null }).days);
        domain.spend.retentionChanged();
      },
    },
  ];
}
