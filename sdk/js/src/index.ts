// @traceloom/sdk: cached prompts with fallback, local compile, prompt-to-span attributes, budget
// checks, scores and experiments over datasets. Only fetch at run time; the OpenTelemetry part is '@traceloom/sdk/otel'.
export { Traceloom } from './client.ts';
export type { TraceloomOptions } from './config.ts';
export type { GetPromptOptions } from './prompts.ts';
export type { BudgetCheck, BudgetCheckQuery } from './budget.ts';
export type { Score, ScoreInput } from './scores.ts';
export {
  DATASET_ITEM_ID_ATTRIBUTE,
  DATASET_RUN_ID_ATTRIBUTE,
  type Dataset,
  type DatasetItem,
  type DatasetRun,
  type ExperimentContext,
  type ExperimentItemResult,
  type ExperimentOptions,
  type ExperimentSpan,
  type ExperimentSummary,
  type ExperimentTracer,
} from './datasets.ts';
export { Prompt, PROMPT_ID_ATTRIBUTE, PROMPT_INPUTS_ATTRIBUTE, PROMPT_VERSION_ATTRIBUTE, type PromptVersionBody } from './prompt.ts';
export {
  compileTemplate,
  placeholderProblem,
  type ChatEntry,
  type ChatMessage,
  type ChatPlaceholder,
  type Compiled,
  type Placeholders,
  type Template,
  type Variables,
} from './compile.ts';
export {
  TraceloomApiError,
  TraceloomCompileError,
  TraceloomError,
  TraceloomPromptUnavailableError,
  TraceloomUnavailableError,
} from './errors.ts';
