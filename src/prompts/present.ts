// Prompts and versions as the API answers them (docs/prompts.md).
import type * as repo from './prompt-repository.ts';
import { extractPlaceholders } from './template.ts';

export function presentPrompt(p: repo.PromptRow) {
  return {
    prompt_id: p.prompt_id,
    type: p.type,
    description: p.description,
    latest_version: p.latest_version,
    labels: p.labels,
    created_at: p.created_at.toISOString(),
    updated_at: p.updated_at.toISOString(),
    archived_at: p.archived_at?.toISOString() ?? null,
  };
}

export function presentVersion(v: repo.VersionRow) {
  return {
    prompt_id: v.prompt_id,
    version: v.version,
    type: v.type,
    template: v.template,
    variables: v.variables,
    placeholders: extractPlaceholders(v.template),
    config: v.config,
    commit_message: v.commit_message,
    created_at: v.created_at.toISOString(),
    created_by: v.created_by,
    labels: v.labels,
    rolled_back_from: v.rolled_back_from,
  };
}
