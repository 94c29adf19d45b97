import { describe, expect, it } from 'vitest';
import { diffLines, unified } from '../../src/prompts/diff.ts';
import { canonicalJson, contentHash, extractVariables, render } from '../../src/prompts/template.ts';

describe('template variables', () => {
  it('are extracted once each, in order, with whitespace and dotted names', () => {
    expect(extractVariables('Hi {{name}} and {{  user.first_name }}; again {{name}}. {{ not a var }} {{1bad}}')).toEqual([
      'name',
      'user.first_name',
    ]);
    expect(
      extractVariables([
        { role: 'system', content: 'You are {{role}}' },
        { role: 'user', content: '{{ q }}' },
      ]),
    ).toEqual(['role', 'q']);
  });

  it('render text: exact names first, then paths into nested inputs; non-strings as JSON', () => {
    const r = render('{{ a }}|{{a.b}}|{{ x.y.z }}|{{n}}|{{obj}}', {
      a: 'A',
      'a.b': 'flat',
      x: { y: { z: 'deep' } },
      n: 3,
      obj: { k: 1 },
      extra: true,
    });
    expect(r.text).toBe('A|flat|deep|3|{"k":1}');
    expect(r.missing).toEqual([]);
    expect(r.unusedInputs).toEqual(['extra']);
  });

  it('render chat keeps roles and extra fields; names every missing variable', () => {
    const r = render(
      [
        { role: 'system', content: 'as {{persona}}', name: 'sys' },
        { role: 'user', content: '{{q}} {{ctx.doc}}' },
      ],
      { persona: 'p' },
    );
    expect(r.messages).toEqual([
      { role: 'system', content: 'as p', name: 'sys' },
      { role: 'user', content: '{{q}} {{ctx.doc}}' },
    ]);
    expect(r.missing).toEqual(['q', 'ctx.doc']);
  });

  it('a value containing braces is not expanded again', () => {
    expect(render('{{a}}', { a: '{{b}}', b: 'no' }).text).toBe('{{b}}');
  });

  it('content hash ignores key order, not content', () => {
    expect(canonicalJson({ b: 1, a: [{ d: 1, c: 2 }] })).toBe('{"a":[{"c":2,"d":1}],"b":1}');
    expect(contentHash('t', { a: 1, b: 2 })).toBe(contentHash('t', { b: 2, a: 1 }));
    expect(contentHash('t', { a: 1 })).not.toBe(contentHash('t', { a: 2 }));
    expect(contentHash('t', {})).not.toBe(contentHash('t ', {}));
  });

  it('canonical JSON is the text stored hashes were made of: sorted keys, escapes, empty and missing values', () => {
    // Content hashes stored with prompt versions and executions compare with hashes made now: the text must not drift.
    const value = {
      z: 'say "hi"\n',
      a: [1, null, undefined, 'x', [], {}],
      é: { y: undefined, x: null, '': false },
      m: 0,
      n: -1.5e-7,
    };
    expect(canonicalJson(value)).toBe(
      String.raw`{"a":[1,null,,"x",[],{}],"m":0,"n":-1.5e-7,"z":"say \"hi\"\n","é":{"":false,"x":null,"y":undefined}}`,
    );
    expect(contentHash('t', value)).toBe('b846b04fffa5c7f383e0aacabfdec2ca0a79937c972cb7a7837a7fc4434e11e0');
    expect(canonicalJson([])).toBe('[]');
    expect(canonicalJson('')).toBe('""');
    expect(canonicalJson(null)).toBe('null');
  });
});

describe('line diff', () => {
  it('keeps common lines and marks changes, removals before additions', () => {
    const d = diffLines(['a', 'b', 'c', 'd'], ['a', 'x', 'c', 'd', 'e']);
    expect(unified(d)).toBe(' a\n-b\n+x\n c\n d\n+e');
  });

  it('is empty of changes for equal input and handles empty sides', () => {
    expect(diffLines(['a'], ['a']).every((l) => l.op === 'equal')).toBe(true);
    expect(unified(diffLines([], ['a']))).toBe('+a');
    expect(unified(diffLines(['a'], []))).toBe('-a');
  });

  it('falls back to a block replacement for huge middles, still correct', () => {
    const a = Array.from({ length: 3000 }, (_, i) => `a${i}`);
    const b = Array.from({ length: 3000 }, (_, i) => `b${i}`);
    const d = diffLines(['same', ...a], ['same', ...b]);
    expect(d.filter((l) => l.op === 'remove')).toHaveLength(3000);
    expect(d.filter((l) => l.op === 'add')).toHaveLength(3000);
    expect(d[0]).toEqual({ op: 'equal', line: 'same' });
  });
});
