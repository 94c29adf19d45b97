// The client: one per process, sharing its caches. Options from the constructor or the environment.
import { BudgetClient } from './budget.ts';
import { DatasetClient } from './datasets.ts';
import { resolveOptions, type TraceloomOptions } from './config.ts';
import { Http } from './http.ts';
import { PromptClient } from './prompts.ts';
import { ScoreClient } from './scores.ts';

export class Traceloom {
  readonly prompts: PromptClient;
  readonly budget: BudgetClient;
  readonly scores: ScoreClient;
  readonly datasets: DatasetClient;

  constructor(options: TraceloomOptions = {}) {
    const o = resolveOptions(options);
    const http = new Http(o);
    this.prompts = new PromptClient(http, o);
    this.budget = new BudgetClient(http, o);
    this.scores = new ScoreClient(http);
    this.datasets = new DatasetClient(http);
  }
}
