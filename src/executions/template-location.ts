// Where a template usage recorded from spans sits in the execution's conversation: the prompt
// version rendered with the usage's inputs, found among the messages. A chat template is found
// where its rendered messages appear in a row (the index of the first, and its role); a text
// template at the first message whose content is the rendered text, else that contains it.
// A chat template with placeholders (filled with the history at render time) is found by its first
// run of messages between placeholders. Undetermined (null in the API) when the template has variables the usage gives no input for,
// or the rendered content is not in the conversation (an SDK that does not record content).
import { isPlaceholder, render, type ChatEntry, type Template } from '../prompts/template.ts';
import type { NormalizedMessage } from './span.ts';

export interface TemplateLocation {
  messageIndex: number;
  role: string;
}

const text = (m: NormalizedMessage | undefined) => (typeof m?.content === 'string' ? m.content.trim() : '');

/** The messages before the first placeholder, else after it (and so on): what appears in a row. */
function firstRun(template: ChatEntry[]): ChatEntry[] {
  const runs: ChatEntry[][] = [[]];
  for (const e of template) {
    if (isPlaceholder(e)) runs.push([]);
    else runs[runs.length - 1]!.push(e);
  }
  return runs.find((r) => r.length > 0) ?? [];
}

export function locateTemplate(
  template: Template,
  inputs: Record<string, unknown>,
  conversation: readonly NormalizedMessage[],
): TemplateLocation | undefined {
  const r = render(typeof template === 'string' ? template : firstRun(template), inputs);
  if (r.missing.length > 0) return undefined;
  if (r.text !== undefined) {
    const wanted = r.text.trim();
    if (wanted === '') return undefined;
    let i = conversation.findIndex((m) => text(m) === wanted);
    if (i < 0) i = conversation.findIndex((m) => text(m).includes(wanted));
    return i < 0 ? undefined : { messageIndex: i, role: conversation[i]!.role };
  }
  const rendered = (r.messages ?? []).filter((m) => m.content.trim() !== '');
  if (rendered.length === 0) return undefined;
  for (let i = 0; i + rendered.length <= conversation.length; i++) {
    if (rendered.every((m, k) => conversation[i + k]!.role === m.role && text(conversation[i + k]) === m.content.trim())) {
      return { messageIndex: i, role: rendered[0]!.role };
    }
  }
  return undefined;
}
