// The prompt editor: a new prompt (POST .../prompts) or a new version (POST .../prompts/{id}/versions).
// Variables are detected as you type and a render preview is shown before saving, with the API's
// own template code (src/prompts/template-render.ts, bundled). `text` templates are a string,
// `chat` templates a list of messages: the type switch picks the editor. The model parameters (the
// version's `config`) start from the version edited and are sent with it (model-params.tsx).
import { useState } from 'preact/hooks';
import { api, enc } from '../api.ts';
import {
  extractVariables,
  isPlaceholder,
  render,
  type ChatEntry,
  type ChatMessage,
  type Template,
} from '../../../src/prompts/template-render.ts';
import { navigate } from '../router.tsx';
import type { PromptVersion } from '../types.ts';
import { Card, ErrorBox, Form, useAction } from '../ui.tsx';
import { configOf, ModelParamsFields, paramsOf } from './model-params.tsx';

type Kind = 'text' | 'chat';

export function PromptEditor({
  projectId,
  promptId,
  from,
  onSaved,
}: {
  projectId: string;
  /** the prompt a version is added to; none: a new prompt */
  promptId?: string;
  /** the version the editor starts from */
  from?: Pick<PromptVersion, 'type' | 'template'> & Partial<Pick<PromptVersion, 'config'>>;
  onSaved(v: PromptVersion): void;
}) {
  const [id, setId] = useState('');
  const [kind, setKind] = useState<Kind>(from?.type ?? 'text');
  const [text, setText] = useState(typeof from?.template === 'string' ? from.template : '');
  const [messages, setMessages] = useState<ChatEntry[]>(Array.isArray(from?.template) ? from.template : [{ role: 'system', content: '' }]);
  const [message, setMessage] = useState('');
  const [labels, setLabels] = useState('');
  const [inputs, setInputs] = useState<Record<string, string>>({});
  const [params, setParams] = useState(() => paramsOf(from?.config));
  const template: Template = kind === 'text' ? text : messages;
  const variables = extractVariables(template);
  const preview = render(template, Object.fromEntries(variables.filter((v) => inputs[v] !== undefined).map((v) => [v, inputs[v]])));
  const base = `/api/projects/${enc(projectId)}/prompts`;
  const save = useAction(async () => {
    const common = {
      template,
      config: configOf(params),
      ...(message.trim() ? { commit_message: message.trim() } : {}),
      ...(labels.trim() ? { labels: labels.split(/[\s,]+/).filter(Boolean) } : {}),
    };
    const saved = promptId
      ? await api<PromptVersion>(`${base}/${enc(promptId)}/versions`, { method: 'POST', body: common })
      : await api<PromptVersion>(base, { method: 'POST', body: { prompt_id: id.trim(), type: kind, ...common } });
    onSaved(saved);
  });
  const setMessageAt = (i: number, change: Partial<ChatMessage>) =>
    setMessages(messages.map((m, j) => (j === i && !isPlaceholder(m) ? { ...m, ...change } : m)));
  return (
    <Card title={promptId ? `New version of ${promptId}` : 'New prompt'} class="prompt-editor">
      <Form onSubmit={() => save.run()} noValidate>
        <div class="filters">
          {!promptId && (
            <>
              <label>
                Prompt id
                <input
                  name="prompt_id"
                  value={id}
                  onInput={(e) => setId((e.target as HTMLInputElement).value)}
                  placeholder="support-reply"
                />
              </label>
              <label>
                Type
                <select name="type" value={kind} onChange={(e) => setKind((e.target as HTMLSelectElement).value as Kind)}>
                  <option value="text">text</option>
                  <option value="chat">chat (messages)</option>
                </select>
              </label>
            </>
          )}
          <label>
            Commit message
            <input name="commit_message" value={message} onInput={(e) => setMessage((e.target as HTMLInputElement).value)} />
          </label>
          <label>
            Labels
            <input name="labels" placeholder="staging" value={labels} onInput={(e) => setLabels((e.target as HTMLInputElement).value)} />
          </label>
        </div>
        <ModelParamsFields value={params} onChange={setParams} />
        {kind === 'text' ? (
          <textarea
            name="template"
            aria-label="Template"
            rows={8}
            value={text}
            onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
          />
        ) : (
          <ol class="messages-editor">
            {messages.map((m, i) =>
              isPlaceholder(m) ? (
                <li>
                  <code>{`{{placeholder: ${m.name}}}`}</code>
                  <button type="button" class="link" onClick={() => setMessages(messages.filter((_, j) => j !== i))}>
                    remove
                  </button>
                </li>
              ) : (
                <li>
                  <select
                    name={`role-${i}`}
                    aria-label={`Role of message ${i + 1}`}
                    value={m.role}
                    onChange={(e) => setMessageAt(i, { role: (e.target as HTMLSelectElement).value })}
                  >
                    {['system', 'user', 'assistant'].map((r) => (
                      <option value={r}>{r}</option>
                    ))}
                  </select>
                  <textarea
                    name={`content-${i}`}
                    aria-label={`Content of message ${i + 1}`}
                    rows={3}
                    value={m.content}
                    onInput={(e) => setMessageAt(i, { content: (e.target as HTMLTextAreaElement).value })}
                  />
                  <button type="button" class="link" onClick={() => setMessages(messages.filter((_, j) => j !== i))}>
                    remove
                  </button>
                </li>
              ),
            )}
            <button type="button" onClick={() => setMessages([...messages, { role: 'user', content: '' }])}>
              + message
            </button>
            <button
              type="button"
              onClick={() => {
                const name = window.prompt('Placeholder name (filled with messages at render time, e.g. history)');
                if (name) setMessages([...messages, { type: 'placeholder', name }]);
              }}
            >
              + placeholder
            </button>
          </ol>
        )}
        <div class="variables" data-variables={variables.join(',')}>
          <strong>Variables:</strong>{' '}
          {variables.length === 0 ? (
            <span class="muted">none — write {'{{name}}'} to add one</span>
          ) : (
            variables.map((v) => <code class="inline">{`{{${v}}}`}</code>)
          )}
        </div>
        {variables.map((v) => (
          <label class="preview-input">
            {v}
            <input
              name={`preview-${v}`}
              value={inputs[v] ?? ''}
              onInput={(e) => setInputs({ ...inputs, [v]: (e.target as HTMLInputElement).value })}
            />
          </label>
        ))}
        <h4>Preview {preview.missing.length > 0 && <span class="muted">(no value yet: {preview.missing.join(', ')})</span>}</h4>
        <pre class="preview">{preview.text ?? (preview.messages ?? []).map((m) => `[${m.role}] ${m.content}`).join('\n\n')}</pre>
        <ErrorBox error={save.error} title="Not saved" />
        <button type="submit" class="primary" disabled={save.busy}>
          {promptId ? 'Save new version' : 'Create prompt'}
        </button>
      </Form>
    </Card>
  );
}

/** After a new prompt is created: its page. */
export const openPrompt = (projectId: string, v: PromptVersion) => navigate(`/projects/${enc(projectId)}/prompts/${enc(v.prompt_id)}`);
