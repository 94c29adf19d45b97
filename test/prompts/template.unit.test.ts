// Chat templates with placeholders as pure functions: the names found, the render, and where a
// template usage sits in a conversation whose history fills the placeholder.
import { describe, expect, it } from 'vitest';
import { locateTemplate } from '../../src/executions/template-location.ts';
import { extractPlaceholders, extractVariables, render, type ChatEntry } from '../../src/prompts/template.ts';

const template: ChatEntry[] = [
  { role: 'system', content: 'You are {{persona}}.' },
  { type: 'placeholder', name: 'history' },
  { role: 'user', content: '{{question}}' },
];

describe('chat templates with placeholders', () => {
  it('placeholders are listed apart from the variables, once each, in order', () => {
    expect(extractPlaceholders([...template, { type: 'placeholder', name: 'examples' }, { type: 'placeholder', name: 'history' }])).toEqual(
      ['history', 'examples'],
    );
    expect(extractVariables(template)).toEqual(['persona', 'question']);
    expect(extractPlaceholders('text {{x}}')).toEqual([]);
  });

  it('render inserts the fill as given and names unfilled placeholders', () => {
    const r = render(template, { persona: 'terse', question: 'Q?' }, { history: [{ role: 'user', content: '{{persona}}' }] });
    expect(r.messages).toEqual([
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: '{{persona}}' },
      { role: 'user', content: 'Q?' },
    ]);
    expect(r.missingPlaceholders).toEqual([]);
    expect(render(template, { persona: 'p', question: 'q' }).missingPlaceholders).toEqual(['history']);
  });

  it('a usage is located by the run of messages before the placeholder, whatever the history holds', () => {
    const conversation = [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'Earlier question' },
      { role: 'assistant', content: 'Earlier answer' },
      { role: 'user', content: 'Q?' },
    ];
    expect(locateTemplate(template, { persona: 'terse', question: 'Q?' }, conversation as never)).toEqual({
      messageIndex: 0,
      role: 'system',
    });
    // A template that starts with the placeholder: located by the messages after it.
    const tail: ChatEntry[] = [
      { type: 'placeholder', name: 'history' },
      { role: 'user', content: '{{question}}' },
    ];
    expect(locateTemplate(tail, { question: 'Q?' }, conversation as never)).toEqual({ messageIndex: 3, role: 'user' });
  });
});
