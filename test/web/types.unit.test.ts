// The console's types against the API's schemas: every interface of web/src/types.ts named like a
// schema of schema/api/ has only fields the schema defines (allOf and $ref followed), and every field
// the schema requires, required. A renamed or removed API field fails here, not in a browser.
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SCHEMAS = path.resolve('schema/api');
const TYPES = path.resolve('web/src/types.ts');

type Schema = { properties?: Record<string, unknown>; required?: string[]; allOf?: Array<Schema & { $ref?: string }>; $ref?: string };
const load = (name: string): Schema => JSON.parse(fs.readFileSync(path.join(SCHEMAS, `${name}.json`), 'utf8'));

/** Properties and required names of a schema, its allOf parts and $refs merged. */
function fieldsOf(s: Schema): { properties: Set<string>; required: Set<string> } {
  const parts = [s, ...(s.allOf ?? [])].map((p) => (p.$ref ? load(p.$ref) : p));
  const out = { properties: new Set<string>(), required: new Set<string>() };
  for (const p of parts) {
    if (p !== s && (p.allOf || p.$ref)) {
      const inner = fieldsOf(p);
      inner.properties.forEach((k) => out.properties.add(k));
      inner.required.forEach((k) => out.required.add(k));
    }
    Object.keys(p.properties ?? {}).forEach((k) => out.properties.add(k));
    (p.required ?? []).forEach((k) => out.required.add(k));
  }
  return out;
}

/** Each exported interface of types.ts named like a schema: its fields, optional or not. */
function consoleTypes(): Map<string, Map<string, boolean>> {
  const program = ts.createProgram([TYPES], { strict: true, noEmit: true, allowImportingTsExtensions: true });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(TYPES)!;
  const out = new Map<string, Map<string, boolean>>();
  for (const sym of checker.getExportsOfModule(checker.getSymbolAtLocation(source)!)) {
    if (!fs.existsSync(path.join(SCHEMAS, `${sym.name}.json`)) || !(sym.flags & ts.SymbolFlags.Interface)) continue;
    const fields = new Map<string, boolean>();
    for (const p of checker.getPropertiesOfType(checker.getDeclaredTypeOfSymbol(sym)))
      fields.set(p.name, (p.flags & ts.SymbolFlags.Optional) !== 0);
    out.set(sym.name, fields);
  }
  return out;
}

describe('console types (web/src/types.ts) against schema/api', () => {
  const types = consoleTypes();

  it('checks the interfaces that name a schema', () => {
    expect([...types.keys()]).toEqual(
      expect.arrayContaining(['ExecutionListItem', 'Execution', 'SpendBreakdown', 'ScopedBudget', 'RepriceJob', 'SessionList', 'UserList']),
    );
  });

  for (const [name, fields] of types) {
    it(`${name}: only fields the schema defines, and every required one`, () => {
      const schema = fieldsOf(load(name));
      expect([...fields.keys()].filter((f) => !schema.properties.has(f))).toEqual([]);
      expect([...schema.required].filter((f) => !fields.has(f) || fields.get(f))).toEqual([]);
    });
  }
});
