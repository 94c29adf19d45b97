// Every route of the service. Adding a resource means adding its file here; the router, the
// OpenAPI document and the route-table tests pick it up.
import type { Identity } from '../../auth/identity.ts';
import type { Stores } from '../../stores/index.ts';
import { apiKeyRoutes } from './api-keys.ts';
import { contextRoutes } from './context.ts';
import { projectRoutes } from './projects.ts';
import { promptRoutes } from './prompts.ts';
import { labelGateRoutes } from './label-gates.ts';
import { executionRoutes } from './executions.ts';
import { spendRoutes } from './spend.ts';
import { scopedBudgetRoutes } from './scoped-budgets.ts';
import { traceRoutes } from './traces.ts';
import { deadLetterRoutes } from './dead-letters.ts';
import { scoreRoutes } from './scores.ts';
import { datasetRoutes } from './datasets.ts';
import { datasetImportRoutes } from './dataset-imports.ts';
import { datasetRunRoutes } from './dataset-runs.ts';
import { otlpSignalRoutes } from './otlp-signals.ts';
import type { Config } from '../../config.ts';
import { modelPriceRoutes } from './model-prices.ts';
import { modelConnectionRoutes } from './model-connections.ts';
import { playgroundRoutes } from './playground.ts';
import { experimentRoutes } from './experiments.ts';
import { evaluatorRoutes } from './evaluators.ts';
import { monitorRoutes } from './monitors.ts';
import { financeRoutes } from './finance.ts';
import type { Domain } from '../../compose/domain.ts';
import { healthRoutes } from './health.ts';
import { metricsRoutes } from './metrics.ts';
import { openapiRoutes } from './openapi.ts';
import type { RouteDef } from './types.ts';

export interface RouteDeps {
  config: Config;
  stores: Stores;
  identity: Identity;
  domain: Domain;
  openapi: () => object;
}

export function createRoutes(deps: RouteDeps): RouteDef[] {
  return [
    ...healthRoutes(deps.stores),
    ...openapiRoutes(deps.openapi),
    ...contextRoutes(deps.stores),
    ...projectRoutes(deps.stores),
    ...apiKeyRoutes(deps.identity.apiKeys),
    ...promptRoutes(deps.domain.prompts, deps.domain.labelGates),
    ...labelGateRoutes(deps.domain.labelGates),
    ...executionRoutes(deps.domain),
    ...spendRoutes(deps.domain),
    ...scopedBudgetRoutes(deps.domain),
    ...traceRoutes(deps.config, deps.domain.traces.ingest),
    ...deadLetterRoutes(deps.domain.traces.deadLetters),
    ...scoreRoutes(
      deps.domain.scores.service,
      deps.domain.scores.loader,
      deps.domain.scores.configs,
      deps.domain.scores.comparison,
      deps.domain.prompts,
    ),
    ...datasetRoutes(deps.domain.datasets.datasets),
    ...datasetImportRoutes(deps.config, deps.domain.datasets.imports),
    ...datasetRunRoutes(deps.domain.datasets.runs, deps.domain.datasets.comparison, deps.domain.prompts),
    ...otlpSignalRoutes(deps.config, deps.domain.logs.ingest, deps.domain.metrics),
    ...modelPriceRoutes(deps.domain.prices.models),
    ...modelConnectionRoutes(deps.domain.evaluators.connections),
    ...evaluatorRoutes(deps.domain.evaluators.service),
    ...monitorRoutes(deps.domain.monitors),
    ...financeRoutes(deps.config, deps.domain.finance),
    ...playgroundRoutes(deps.domain.playground),
    ...experimentRoutes(deps.domain.experiments),
    ...metricsRoutes(deps.config, deps.domain.metrics),
  ];
}
