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

function describe(e: ErrorObject): string {
  const field = e.instancePath.replace(/^\//, '').replace(/\//g, '.');
  switch (e.keyword) {
    case 'required':
      return `${field ? `${field}.` : ''}${String(e.params.missingProperty)}: is required`;
    case 'additionalProperties':
      return `${field ? `${field}.` : ''}${String(e.params.additionalProperty)}: unknown field`;
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
}

export function createValidator(schemas: readonly JsonSchema[] = loadApiSchemas()): Validator {
  const ajv = new Ajv2020({ allErrors: true, strict: true, coerceTypes: false, useDefaults: true });
  addFormats(ajv);
  for (const s of schemas) ajv.addSchema(s);
  const compiled = new Map<string, ValidateFunction>();
  for (const s of schemas) compiled.set(s.$id, ajv.getSchema(s.$id) as ValidateFunction);
  return {
    schemas,
    validate<T>(id: string, value: unknown, what = 'body'): T {
      const fn = compiled.get(id);
      if (!fn) throw new Error(`no schema ${id} in schema/api`);
      if (fn(value)) return value as T;
      const problems = [...new Set((fn.errors ?? []).map(describe))];
      throw badRequest(`Invalid ${what}: ${problems.join('; ')}`);
    },
  };
}
