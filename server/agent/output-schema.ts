import { Ajv2020 } from 'ajv/dist/2020.js';
import type { JsonValue } from './json-value';

/**
 * A task's `output_schema`: a JSON Schema (draft 2020-12) of the subset the service takes
 * (objects, arrays, strings, numbers, integers, booleans, enums, required, nullable), at
 * most 16 KiB as JSON. It is checked by a walk over the keywords first, then compiled with
 * Ajv in strict mode: no `$ref` (so no remote schemas), no `pattern` or `format` (no
 * regular expressions from a client), nothing Ajv would not understand.
 */
export const OUTPUT_SCHEMA_MAX_BYTES = 16 * 1024;
const MAX_DEPTH = 32;

/** Keywords allowed in any (sub)schema; each is handled by the walk below. */
const KEYWORDS = new Set([
  '$schema',
  'title',
  'description',
  'type',
  'enum',
  'const',
  'nullable',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'minItems',
  'maxItems',
  'uniqueItems',
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
]);
const TYPES = new Set(['object', 'array', 'string', 'number', 'integer', 'boolean', 'null']);
const DRAFT_2020 = 'https://json-schema.org/draft/2020-12/schema';

export type OutputSchemaCheck = { ok: true; validate: (value: JsonValue) => boolean } | { ok: false; problem: string };

function newAjv(): Ajv2020 {
  // strict: unknown keywords, ignored keywords and type mismatches are errors; no formats
  // (none allowed), no remote loading (no loadSchema), messages not needed.
  return new Ajv2020({ strict: true, allErrors: false, validateFormats: false, messages: false });
}

/** Checks and compiles a submitted schema; `problem` is a short reason for the 400 message. */
export function compileOutputSchema(schema: unknown): OutputSchemaCheck {
  const size = Buffer.byteLength(JSON.stringify(schema) ?? '', 'utf8');
  if (size > OUTPUT_SCHEMA_MAX_BYTES) return { ok: false, problem: `output_schema must be at most ${OUTPUT_SCHEMA_MAX_BYTES} bytes as JSON.` };
  const walked = walk(schema, 0, true);
  if (walked !== null) return { ok: false, problem: walked };
  try {
    const validate = newAjv().compile(schema as object);
    return { ok: true, validate: (value) => validate(value) === true };
  } catch {
    return { ok: false, problem: 'output_schema is not a valid JSON Schema of the supported subset.' };
  }
}

function walk(schema: unknown, depth: number, root: boolean): string | null {
  if (depth > MAX_DEPTH) return `output_schema nests deeper than ${MAX_DEPTH} levels.`;
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return 'output_schema and each of its subschemas must be a JSON object.';
  for (const [keyword, value] of Object.entries(schema)) {
    if (!KEYWORDS.has(keyword)) return `output_schema uses the unsupported keyword "${keyword.slice(0, 40)}".`;
    if (keyword === '$schema' && (!root || value !== DRAFT_2020)) return `output_schema may name only ${DRAFT_2020} as $schema, at its root.`;
    if (keyword === 'type') {
      const types = Array.isArray(value) ? value : [value];
      if (types.length === 0 || !types.every((type) => typeof type === 'string' && TYPES.has(type))) return 'output_schema has a type that is not supported.';
    }
    if (keyword === 'properties') {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'output_schema properties must be an object.';
      for (const sub of Object.values(value)) {
        const problem = walk(sub, depth + 1, false);
        if (problem !== null) return problem;
      }
    }
    if ((keyword === 'items' || (keyword === 'additionalProperties' && typeof value !== 'boolean'))) {
      const problem = walk(value, depth + 1, false);
      if (problem !== null) return problem;
    }
  }
  return null;
}
