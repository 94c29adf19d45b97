// JSON Schemas in schema/api are the one source of truth: ajv compiles them at boot to validate
// requests, and the OpenAPI document embeds the same files.
import fs from 'node:fs';
import path from 'node:path';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { SCHEMA_DIR } from '../stores/migrate.ts';
import { badRequest } from './errors.ts';
import { fieldName, inputProblems, textProblem } from './input-checks.ts';

// ajv-formats is CommonJS; its default export arrives wrapped under ESM.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv2020) => Ajv2020;

export type JsonSchema = Record<string, unknown> & { $id: string };

export const API_SCHEMA_DIR = path.join(SCHEMA_DIR, 'api');

export function loadApiSchemas(dir: string = API_SCHEMA_DIR): JsonSchema[] {
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => {
      const schema = JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as JsonSchema;
      if (schema.$id !== path.basename(f, '.json')) throw new Error(`schema/api/${f}: $id must be "${path.basename(f, '.json')}"`);
      return schema;
    });
}

/** An ajv instancePath ("/1/name") as path segments ([1, "name"]). */
const segments = (instancePath: string): Array<string | number> =>
  instancePath === ''
    ? []
    : instancePath
        .slice(1)
        .split('/')
        .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
        .map((p) => (/^\d+$/.test(p) ? Number(p) : p));

/** One ajv error in words, its place named by `field` (fieldName). */
function describe(e: ErrorObject, field: (path: Array<string | number>) => string, unknown = 'unknown field'): string {
  const at = segments(e.instancePath);
  switch (e.keyword) {
    case 'required':
      return `${field([...at, String(e.params.missingProperty)])}: is required`;
    case 'additionalProperties':
      return `${field([...at, String(e.params.additionalProperty)])}: ${unknown}`;
    case 'enum':
      return `${field(at)}: must be one of ${(e.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    default:
      return `${field(at)}: ${e.message ?? 'is invalid'}`;
  }
}

type Branch = Record<string, unknown>;

const JSON_TYPE_WORDS: Record<string, string> = {
  object: 'an object',
  array: 'an array',
  string: 'a string',
  number: 'a number',
  integer: 'an integer',
  boolean: 'true or false',
  null: 'null',
};

/** The JSON types a oneOf branch takes (through one $ref), or undefined when it does not say. */
function branchTypes(instance: Ajv2020, b: Branch): string[] | undefined {
  const target = typeof b.$ref === 'string' ? (instance.getSchema(b.$ref)?.schema as Branch | undefined) : b;
  const t = target?.type;
  return t === undefined ? undefined : [t].flat().map(String);
}

function takesType(types: string[] | undefined, data: unknown): boolean {
  if (types === undefined) return true;
  const t = data === null ? 'null' : Array.isArray(data) ? 'array' : typeof data;
  if (t === 'number') return types.includes('number') || (types.includes('integer') && Number.isInteger(data));
  return types.includes(t);
}

/**
 * The problems of `value` against `fn`, in words. ajv answers a failed oneOf with the errors of
 * every branch and "must match exactly one schema in oneOf" (a batch of scores: "body: must be
 * object; 1.name: must be string; body: must match exactly one schema in oneOf"). Here a oneOf
 * speaks through the branch of the value's JSON type (validated again on its own, so its errors
 * are the only ones), or, when no branch or several take that type, says which types it takes.
 */
function problemsOf(
  instance: Ajv2020,
  fn: ValidateFunction,
  value: unknown,
  at: Array<string | number>,
  field: (path: Array<string | number>) => string,
  unknown: string,
  branchFns: WeakMap<object, ValidateFunction>,
): string[] {
  if (fn(value)) return [];
  const errors = (fn.errors ?? []).map((e) => ({
    ...e,
    instancePath: at.map((p) => `/${String(p).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('') + e.instancePath,
  }));
  const within = (outer: string, inner: string) => inner === outer || inner.startsWith(`${outer}/`);
  // The outermost failed oneOfs; what lies inside them is said by their branch.
  const oneOfs = errors
    .filter((e) => e.keyword === 'oneOf' && e.params.passingSchemas == null)
    .sort((x, y) => x.instancePath.length - y.instancePath.length)
    .filter((e, i, all) => !all.slice(0, i).some((o) => within(o.instancePath, e.instancePath)));
  const out: string[] = [];
  for (const e of errors) {
    if (oneOfs.some((o) => within(o.instancePath, e.instancePath))) continue;
    // 'must match "then" schema' only repeats that the errors beside it were found under an if.
    if (e.keyword === 'if' && errors.length > 1) continue;
    out.push(describe(e, field, unknown));
  }
  for (const o of oneOfs) {
    const branches = o.schema as Branch[];
    const fitting = branches.filter((b) => takesType(branchTypes(instance, b), o.data));
    const answers = fitting.map((b) => {
      let bf = branchFns.get(b);
      if (!bf) branchFns.set(b, (bf = typeof b.$ref === 'string' ? instance.getSchema(b.$ref)! : instance.compile(b)));
      return problemsOf(instance, bf, o.data, segments(o.instancePath), field, unknown, branchFns);
    });
    const best = answers.sort((x, y) => x.length - y.length)[0];
    if (best && best.length > 0) out.push(...best);
    else {
      const words = [...new Set(branches.flatMap((b) => branchTypes(instance, b) ?? []))].map((t) => JSON_TYPE_WORDS[t] ?? t);
      const last = words.length > 2 ? `, or ${words[words.length - 1]}` : ` or ${words[words.length - 1]}`;
      const listed = words.length > 1 ? `${words.slice(0, -1).join(', ')}${last}` : (words[0] ?? 'one of its forms');
      out.push(`${field(segments(o.instancePath))}: must be ${fitting.length > 1 ? 'exactly one of its forms' : listed}`);
    }
  }
  return out;
}

type PropertySchema = { type?: string | string[]; items?: PropertySchema };

const typesOf = (s: PropertySchema | undefined) => [s?.type ?? []].flat();

/** The schema of query parameter `name` in a query schema: its property, or the first patternProperties match. */
function parameterSchema(schema: JsonSchema | undefined, name: string): PropertySchema | undefined {
  const props = schema?.properties as Record<string, PropertySchema> | undefined;
  if (props && Object.hasOwn(props, name)) return props[name];
  const patterns = (schema?.patternProperties ?? {}) as Record<string, PropertySchema>;
  for (const [re, s] of Object.entries(patterns)) if (new RegExp(re, 'u').test(name)) return s;
  return undefined;
}

const INTEGER = /^-?\d+$/;
const DECIMAL = /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/;

/**
 * A query number, parsed strictly: ajv's own coercion takes " 5", "0x10", "1e21" and "Infinity"
 * for numbers (and lets Infinity past `maximum`), so numeric parameters are parsed here first.
 * Integers are digits only and within Number.MAX_SAFE_INTEGER; numbers are decimals and finite.
 */
function queryNumber(raw: string, integer: boolean): { value: number } | { problem: string } {
  if (integer) {
    if (!INTEGER.test(raw)) return { problem: 'must be an integer (digits only)' };
    const value = Number(raw);
    if (!Number.isSafeInteger(value))
      return { problem: `must be an integer between -${Number.MAX_SAFE_INTEGER} and ${Number.MAX_SAFE_INTEGER}` };
    return { value };
  }
  if (!DECIMAL.test(raw)) return { problem: 'must be a decimal number' };
  const value = Number(raw);
  return Number.isFinite(value) ? { value } : { problem: 'must be a finite number' };
}

/** Numeric query parameters parsed (see queryNumber); the ones that do not parse are left out and named. */
function parseQueryNumbers(
  schema: JsonSchema | undefined,
  query: Record<string, unknown>,
): { query: Record<string, unknown>; problems: string[] } {
  const out: Record<string, unknown> = { ...query };
  const problems: string[] = [];
  for (const [name, raw] of Object.entries(query)) {
    const s = parameterSchema(schema, name);
    const types = typesOf(s);
    const itemTypes = types.includes('array') ? typesOf(s?.items) : [];
    const numeric = (t: string[]) => (t.includes('integer') || t.includes('number')) && !t.includes('string');
    const parse = (v: unknown, t: string[]): unknown => {
      if (typeof v !== 'string') return v;
      const r = queryNumber(v, !t.includes('number'));
      if ('value' in r) return r.value;
      problems.push(`${name}: ${r.problem}`);
      return v;
    };
    const before = problems.length;
    let value = raw;
    if (numeric(types)) value = Array.isArray(raw) ? raw : parse(raw, types);
    else if (numeric(itemTypes)) value = Array.isArray(raw) ? raw.map((v) => parse(v, itemTypes)) : parse(raw, itemTypes);
    // A parameter that does not parse is named here, and kept from ajv (which would coerce it its own way).
    if (problems.length > before) delete out[name];
    else out[name] = value;
  }
  return { query: out, problems };
}

export interface Validator {
  /** The schemas, for the OpenAPI document. */
  readonly schemas: readonly JsonSchema[];
  /**
   * Returns the value when it matches schema `id`; otherwise a 400 naming each offending field.
   * `batch` names the items of an array body (`scores` → `scores[1].name`), as the domain names them.
   */
  validate<T>(id: string, value: unknown, what?: string, batch?: string): T;
  /** Query parameters: strings coerced to the schema's types, defaults applied; 400 naming the parameter. */
  validateQuery<T>(id: string, query: Record<string, unknown>): T;
  /** Path parameters: text a store cannot hold is a 400 naming the parameter (their shape is the domain's to check). */
  validatePath(params: Record<string, string>): void;
}

export function createValidator(schemas: readonly JsonSchema[] = loadApiSchemas()): Validator {
  // verbose: a failed oneOf carries its branches and the value, to say what it takes (problemsOf).
  const ajv = new Ajv2020({ allErrors: true, strict: true, coerceTypes: false, useDefaults: true, verbose: true });
  addFormats(ajv);
  for (const s of schemas) ajv.addSchema(s);
  // Query strings carry only strings: a second instance coerces them ("true" → true, "a" → ["a"]);
  // numbers are parsed before it, strictly (parseQueryNumbers).
  const queryAjv = new Ajv2020({ allErrors: true, strict: true, coerceTypes: 'array', useDefaults: true, verbose: true });
  addFormats(queryAjv);
  for (const s of schemas) queryAjv.addSchema(s);
  const byId = new Map(schemas.map((s) => [s.$id, s]));
  const branchFns = new WeakMap<object, ValidateFunction>();
  const schemaProblems = (instance: Ajv2020, id: string, value: unknown, what: string, batch?: string): string[] => {
    const fn = instance.getSchema(id) as ValidateFunction | undefined;
    if (!fn) throw new Error(`no schema ${id} in schema/api`);
    const field = (path: Array<string | number>) => fieldName(path, what, batch);
    return problemsOf(instance, fn, value, [], field, what === 'body' ? 'unknown field' : `unknown ${what}`, branchFns);
  };
  const refuse = (what: string, problems: string[]) => {
    if (problems.length > 0) throw badRequest(`Invalid ${what}: ${[...new Set(problems)].join('; ')}`);
  };
  return {
    schemas,
    validate<T>(id: string, value: unknown, what = 'body', batch?: string): T {
      const items = Array.isArray(value) ? batch : undefined;
      // Text and numbers first: a schema message would echo the value a store cannot hold.
      refuse(what, inputProblems(value, what, [], items));
      refuse(what, schemaProblems(ajv, id, value, what, items));
      return value as T;
    },
    validateQuery<T>(id: string, query: Record<string, unknown>): T {
      const what = 'query parameter';
      const text: string[] = [];
      for (const [name, v] of Object.entries(query)) {
        const p = textProblem(name);
        if (p) text.push(`a parameter name ${p}`);
        else text.push(...inputProblems(v, name, [name]));
      }
      refuse(what, text);
      // Repeated scalar parameters (?limit=1&limit=2) are ambiguous: the last one wins only for lists.
      const parsed = parseQueryNumbers(byId.get(id), query);
      refuse(what, [...parsed.problems, ...schemaProblems(queryAjv, id, parsed.query, what)]);
      return parsed.query as T;
    },
    validatePath(params: Record<string, string>): void {
      const problems: string[] = [];
      for (const [name, v] of Object.entries(params)) {
        const p = textProblem(v);
        if (p) problems.push(`${name}: ${p}`);
      }
      refuse('path parameter', problems);
    },
  };
}
