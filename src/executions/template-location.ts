// Where a template usage recorded from spans sits in the execution's conversation: the prompt
// version rendered with the usage's inputs, found among the messages. A chat template is found
// where its rendered messages appear in a row (the index of the first, and its role); a text
// template at the first message whose content is the rendered text, else that contains it.
// Undetermined (null in the API) when the template has variables the usage gives no input for,
// or the rendered content is not in the conversation (an SDK that does not record content).
import { render, type Template } from '../prompts/template.ts';
import type { NormalizedMessage } from './span.ts';

export interface TemplateLocation {
  messageIndex: number;
  role: string;
}

const text = (m: NormalizedMessage | undefined) => (typeof m?.content === 'string' ? m.content.trim() : '');

export function locateTemplate(
  template: Template,
  inputs: Record<string, unknown>,
  conversation: readonly NormalizedMessage[],
): TemplateLocation | undefined {
  const r = render(template, inputs);
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
