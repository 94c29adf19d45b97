// User, session, tags and metadata from every convention that carries them (issue 13, item 7):
// the exact keys each SDK sends → the span's userId, sessionId, tags and metadata, and explain
// naming each key as mapped or ignored (with the reason).
import { describe, expect, it } from 'vitest';
import { mapSpan } from '../../../src/ingest/mapping/index.ts';
import { executionAttributes } from '../../../src/executions/execution-attributes.ts';
import { locateTemplate } from '../../../src/executions/template-location.ts';
import { json, span } from '../../helpers/spans.ts';

const chat = { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o-mini' };

describe('attributes kept, by convention', () => {
  it('OpenTelemetry: user.id and session.id', () => {
    const m = mapSpan(span({ ...chat, 'user.id': 'u-1', 'session.id': 's-1' }));
    expect([m.userId, m.sessionId, m.tags, m.metadata]).toEqual(['u-1', 's-1', [], {}]);
    expect(m.explain.mapped).toMatchObject({ userId: 'user.id', sessionId: 'session.id' });
  });

  it('Langfuse: langfuse.user.id, langfuse.session.id, langfuse.trace.tags, langfuse.trace.metadata.*', () => {
    const m = mapSpan(
      span({
        ...chat,
        'langfuse.user.id': 'lf-user',
        'langfuse.session.id': 'lf-session',
        'langfuse.trace.tags': ['prod', 'beta'],
        'langfuse.trace.metadata.region': 'eu',
        'langfuse.trace.metadata.attempt': 2,
      }),
    );
    expect(m.userId).toBe('lf-user');
    expect(m.sessionId).toBe('lf-session');
    expect(m.tags).toEqual(['prod', 'beta']);
    expect(m.metadata).toEqual({ region: 'eu', attempt: '2' });
    expect(m.explain.mapped).toMatchObject({
      userId: 'langfuse.user.id',
      tags: 'langfuse.trace.tags',
      metadata: 'langfuse.trace.metadata.*',
    });
  });

  it('Langfuse tags sent as a JSON string, metadata as one object', () => {
    const m = mapSpan(
      span({ ...chat, 'langfuse.trace.tags': json(['a', 'b']), 'langfuse.trace.metadata': json({ team: 'search', n: 3 }) }),
    );
    expect(m.tags).toEqual(['a', 'b']);
    expect(m.metadata).toEqual({ team: 'search', n: '3' });
  });

  it('OpenInference: user.id, session.id, tag.tags and metadata (a JSON string)', () => {
    const m = mapSpan(
      span({
        'openinference.span.kind': 'LLM',
        'llm.model_name': 'gpt-4o',
        'user.id': 'oi-user',
        'session.id': 'oi-session',
        'tag.tags': ['x', 'y'],
        metadata: json({ customer: 'acme', tier: { level: 2 } }),
      }),
    );
    expect([m.userId, m.sessionId, m.tags]).toEqual(['oi-user', 'oi-session', ['x', 'y']]);
    expect(m.metadata).toEqual({ customer: 'acme', tier: '{"level":2}' });
    expect(m.explain.mapped).toMatchObject({ tags: 'tag.tags', metadata: 'metadata' });
  });

  it('OpenLLMetry: traceloop.association.properties.* (user_id and session_id are not metadata)', () => {
    const m = mapSpan(
      span({
        ...chat,
        'traceloop.association.properties.user_id': 'tl-user',
        'traceloop.association.properties.session_id': 'tl-session',
        'traceloop.association.properties.chat_id': 'c-9',
      }),
    );
    expect([m.userId, m.sessionId]).toEqual(['tl-user', 'tl-session']);
    expect(m.metadata).toEqual({ chat_id: 'c-9' });
    expect(m.explain.mapped.metadata).toBe('traceloop.association.properties.*');
  });

  it('Vercel AI SDK: ai.telemetry.metadata.* (userId, sessionId and tags keys have their own fields)', () => {
    const m = mapSpan(
      span({
        'ai.operationId': 'ai.generateText.doGenerate',
        'ai.model.id': 'gpt-4o',
        'ai.telemetry.metadata.userId': 'v-user',
        'ai.telemetry.metadata.sessionId': 'v-session',
        'ai.telemetry.metadata.tags': ['vercel'],
        'ai.telemetry.metadata.feature': 'search',
      }),
    );
    expect([m.userId, m.sessionId, m.tags, m.metadata]).toEqual(['v-user', 'v-session', ['vercel'], { feature: 'search' }]);
  });

  it('explain lists what could not be used, and why', () => {
    const m = mapSpan(
      span({
        ...chat,
        'user.id': 'first',
        'langfuse.user.id': 'second',
        'tag.tags': { not: 'a list' },
        metadata: '{"broken"',
        'langfuse.trace.metadata': json(['not', 'an object']),
      }),
    );
    expect(m.userId).toBe('first');
    const ignored = Object.fromEntries(m.explain.ignored.map((i) => [i.key, i.reason]));
    expect(ignored['langfuse.user.id']).toMatch(/superseded by user\.id/);
    expect(ignored['tag.tags']).toMatch(/not a list of tags/);
    expect(ignored['metadata']).toMatch(/malformed JSON/);
    expect(ignored['langfuse.trace.metadata']).toMatch(/not a JSON object/);
  });

  it('bounds: 50 tags of 128 characters, 50 metadata keys, values of 2,000 characters', () => {
    const many = Array.from({ length: 60 }, (_, i) => `t${i}`);
    const meta = Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`k${i}`, i === 0 ? 'v'.repeat(3000) : 'v']));
    const m = mapSpan(span({ ...chat, 'tag.tags': [...many, 'x'.repeat(200)], metadata: json(meta) }));
    expect(m.tags).toHaveLength(50);
    expect(Object.keys(m.metadata)).toHaveLength(50);
    expect(m.metadata.k0).toHaveLength(2000);
    expect(m.explain.ignored.map((i) => i.reason).join('\n')).toMatch(/more than 50 tags[\s\S]*more than 50 metadata keys/);
  });
});

describe("an execution's attributes, from its spans", () => {
  const s = (id: string, parent: string, start: number, over: object) => ({
    span_id: id,
    parent_span_id: parent,
    start_time_ns: String(start),
    session_id: '',
    user_id: '',
    tags: [] as string[],
    metadata: {} as Record<string, string>,
    ...over,
  });

  it('the root first, then spans by start; tags unioned; the first span to set a metadata key wins', () => {
    const a = executionAttributes([
      s('c2', 'r', 30, { user_id: 'late', tags: ['b'], metadata: { k: 'child2', z: '1' } }),
      s('c1', 'r', 20, { session_id: 'sess', tags: ['a', 'b'], metadata: { k: 'child1' } }),
      s('r', '', 10, { user_id: 'root-user', metadata: { k: 'root' } }),
    ]);
    expect(a).toEqual({ user_id: 'root-user', session_id: 'sess', tags: ['a', 'b'], metadata: { k: 'root', z: '1' } });
  });
});

describe('where a template usage sits in the conversation', () => {
  const conversation = [
    { role: 'system', content: 'You are a weather bot for Paris.' },
    { role: 'user', content: 'Weather in Paris?' },
    { role: 'assistant', content: 'Sunny.' },
  ];

  it('a chat template: the first of its rendered messages, and its role', () => {
    const t = [
      { role: 'system', content: 'You are a weather bot for {{city}}.' },
      { role: 'user', content: 'Weather in {{city}}?' },
    ];
    expect(locateTemplate(t, { city: 'Paris' }, conversation)).toEqual({ messageIndex: 0, role: 'system' });
  });

  it('a text template: the message that is (or contains) the rendered text', () => {
    expect(locateTemplate('Weather in {{city}}?', { city: 'Paris' }, conversation)).toEqual({ messageIndex: 1, role: 'user' });
    expect(locateTemplate('weather bot for {{city}}', { city: 'Paris' }, conversation)).toEqual({ messageIndex: 0, role: 'system' });
  });

  it('undetermined when an input is missing or the content is not in the conversation', () => {
    expect(locateTemplate('Weather in {{city}}?', {}, conversation)).toBeUndefined();
    expect(locateTemplate('Weather in {{city}}?', { city: 'Rome' }, conversation)).toBeUndefined();
  });
});
