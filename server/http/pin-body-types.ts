import type { Meta } from '../trpc/init';

type ZodLike = { _zod: { def: Record<string, unknown> & { type: string } } };

const COERCIBLE_TYPES = new Set(['number', 'boolean', 'bigint', 'date', 'string']);
const WRAPPER_TYPES = new Set(['optional', 'nullable', 'default', 'prefault', 'readonly', 'nonoptional']);

/**
 * trpc-to-openapi makes every number and boolean field of an input object coercing, on
 * every request, so that query strings ("limit=5") parse. Applied to a JSON body that
 * would turn `"enabled": "false"` into `true`, while CONTRACT.md wants wrong types
 * refused. For the procedures that take a body, the coerce flag of each field is pinned
 * to false: the adapter's write is ignored and the field keeps JSON's types.
 */
export function pinBodyFieldTypes(procedures: Record<string, { _def: { meta?: Meta; inputs?: unknown[] } }>): void {
  for (const procedure of Object.values(procedures)) {
    const method = procedure._def.meta?.openapi?.method;
    if (method !== 'POST' && method !== 'PATCH' && method !== 'PUT') continue;
    for (const input of procedure._def.inputs ?? []) pinObject(input as ZodLike);
  }
}

function pinObject(schema: ZodLike): void {
  const def = schema._zod.def;
  if (def.type !== 'object') return;
  for (const field of Object.values(def.shape as Record<string, ZodLike>)) pinField(field);
}

function pinField(field: ZodLike): void {
  const def = field._zod.def;
  if (WRAPPER_TYPES.has(def.type)) return pinField(def.innerType as ZodLike);
  if (def.type === 'object') return pinObject(field);
  // Pinned already by an earlier handler in this process (the schemas are module-level).
  if (!COERCIBLE_TYPES.has(def.type) || Object.getOwnPropertyDescriptor(def, 'coerce')?.set !== undefined) return;
  Object.defineProperty(def, 'coerce', { get: () => false, set: () => {}, configurable: false, enumerable: true });
}
