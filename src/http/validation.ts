// JSON Schemas in schema/api are the one source of truth: ajv compiles them at boot to validate
// requests, and the OpenAPI document embeds the same files.
import fs from 'node:fs';
import path from 'node:path';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { SCHEMA_DIR } from '../stores/migrate.ts';
import { badRequest } from './errors.ts';
import { inputProblems, textProblem } from './input-checks.ts';

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

function describe(e: ErrorObject, unknown = 'unknown field'): string {
  const field = e.instancePath.replace(/^\//, '').replace(/\//g, '.');
  switch (e.keyword) {
    case 'required':
      return `${field ? `${field}.` : ''}${String(e.params.missingProperty)}: is required`;
    case 'additionalProperties':
      return `${field ? `${field}.` : ''}${String(e.params.additionalProperty)}: ${unknown}`;
    case 'enum':
      return `${field || 'body'}: must be one of ${(e.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    default:
      return `${field || 'body'}: ${e.message ?? 'is invalid'}`;
  }
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
  /** Returns the value when it matches schema `id`; otherwise a 400 naming each offending field. */
  validate<T>(id: string, value: unknown, what?: string): T;
  /** Query parameters: strings coerced to the schema's types, defaults applied; 400 naming the parameter. */
  validateQuery<T>(id: string, query: Record<string, unknown>): T;
  /** Path parameters: text a store cannot hold is a 400 naming the parameter (their shape is the domain's to check). */
  validatePath(params: Record<string, string>): void;
}

export function createValidator(schemas: readonly JsonSchema[] = loadApiSchemas()): Validator {
  const ajv = new Ajv2020({ allErrors: true, strict: true, coerceTypes: false, useDefaults: true });
  addFormats(ajv);
  for (const s of schemas) ajv.addSchema(s);
  // Query strings carry only strings: a second instance coerces them ("true" → true, "a" → ["a"]);
  // numbers are parsed before it, strictly (parseQueryNumbers).
  const queryAjv = new Ajv2020({ allErrors: true, strict: true, coerceTypes: 'array', useDefaults: true });
  addFormats(queryAjv);
  for (const s of schemas) queryAjv.addSchema(s);
  const byId = new Map(schemas.map((s) => [s.$id, s]));
  const schemaProblems = (instance: Ajv2020, id: string, value: unknown, what: string): string[] => {
    const fn = instance.getSchema(id) as ValidateFunction | undefined;
    if (!fn) throw new Error(`no schema ${id} in schema/api`);
    if (fn(value)) return [];
    return (fn.errors ?? []).map((e) => describe(e, what === 'body' ? 'unknown field' : `unknown ${what}`));
  };
  const refuse = (what: string, problems: string[]) => {
    if (problems.length > 0) throw badRequest(`Invalid ${what}: ${[...new Set(problems)].join('; ')}`);
  };
  return {
    schemas,
    validate<T>(id: string, value: unknown, what = 'body'): T {
      // Text and numbers first: a schema message would echo the value a store cannot hold.
      refuse(what, inputProblems(value, what));
      refuse(what, schemaProblems(ajv, id, value, what));
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
