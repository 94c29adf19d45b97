// Prompts named by traced spans (trace assembly, src/ingest/assembly/): a reference resolved to the
// version it means, and a version's template (where its inputs sit in the conversation). A span
// names prompts in free text: a malformed id or an unknown prompt is no prompt, never an error; a
// store that does not answer is an error, so the trace is retried.
import type { Logger } from '../logger.ts';
import { DomainError } from '../errors.ts';
import { isConnectivityError, StoreUnavailableError } from '../stores/errors.ts';
import { parseVersionRef } from './prompt-input.ts';
import type { PromptService } from './service.ts';
import type { Template } from './template.ts';

/** Prompt ids are chosen by users in this form (docs/prompts.md). */
const PROMPT_ID = /^[a-z0-9][a-z0-9._-]{0,127}$/;

const storeDown = (err: unknown) => err instanceof StoreUnavailableError || isConnectivityError(err);

export function createTracePromptReferences(prompts: Pick<PromptService, 'version'>, logger: Logger) {
  return {
    /** The version a span's reference (`ref`: a version number or a label) resolves to, or undefined. */
    async resolvePrompt(projectId: string, promptId: string, ref: string): Promise<number | undefined> {
      if (!PROMPT_ID.test(promptId)) return undefined;
      try {
        return (await prompts.version(projectId, promptId, parseVersionRef(ref))).version;
      } catch (err) {
        if (storeDown(err)) throw err; // retried with the trace
        if (!(err instanceof DomainError))
          logger.warn({ prompt_id: promptId, err: { message: (err as Error).message } }, 'prompt reference not resolved');
        return undefined;
      }
    },
    /** The template of a version, or undefined when there is no such version. */
    async promptTemplate(projectId: string, promptId: string, version: number): Promise<Template | undefined> {
      try {
        return (await prompts.version(projectId, promptId, parseVersionRef(version))).template as Template;
      } catch (err) {
        if (storeDown(err)) throw err; // retried with the trace
        return undefined;
      }
    },
  };
}
