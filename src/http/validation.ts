// JSON Schemas in schema/api are the one source of truth: ajv compiles them at boot to validate
// requests, and the OpenAPI document embeds the same files.
import fs from 'node:fs';
import path from 'node:path';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { SCHEMA_DIR } from '../stores/migrate.ts';
import { badRequest } from './errors.ts';

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

export interface Validator {
  /** The schemas, for the OpenAPI document. */
  readonly schemas: readonly JsonSchema[];
  /** Returns the value when it matches schema `id`; otherwise a 400 naming each offending field. */
  validate<T>(id: string, value: unknown, what?: string): T;
  /** Query parameters: strings coerced to the schema's types, defaults applied; 400 naming the parameter. */
  validateQuery<T>(id: string, query: Record<string, unknown>): T;
}

export function createValidator(schemas: readonly JsonSchema[] = loadApiSchemas()): Validator {
  const ajv = new Ajv2020({ allErrors: true, strict: true, coerceTypes: false, useDefaults: true });
  addFormats(ajv);
  for (const s of schemas) ajv.addSchema(s);
  // Query strings carry only strings: a second instance coerces them ("50" → 50, "true" → true).
  const queryAjv = new Ajv2020({ allErrors: true, strict: true, coerceTypes: 'array', useDefaults: true });
  addFormats(queryAjv);
  for (const s of schemas) queryAjv.addSchema(s);
  const check = (instance: Ajv2020, id: string, value: unknown, what: string) => {
    const fn = instance.getSchema(id) as ValidateFunction | undefined;
    if (!fn) throw new Error(`no schema ${id} in schema/api`);
    if (fn(value)) return value;
    const problems = [...new Set((fn.errors ?? []).map((e) => describe(e, what === 'body' ? 'unknown field' : `unknown ${what}`)))];
    throw badRequest(`Invalid ${what}: ${problems.join('; ')}`);
  };
  return {
    schemas,
    validate<T>(id: string, value: unknown, what = 'body'): T {
      return check(ajv, id, value, what) as T;
    },
    validateQuery<T>(id: string, query: Record<string, unknown>): T {
      // Repeated scalar parameters (?limit=1&limit=2) are ambiguous: the last one wins only for lists.
      return check(queryAjv, id, { ...query }, 'query parameter') as T;
    },
  };
}
