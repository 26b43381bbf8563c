// How the OpenAPI document writes a JSON value (`z.json()`: a task's result, an escalation's
// answer, an output schema's members), so that generators can use it.
//
// zod-openapi writes `z.json()` as one schema that refers to itself through both its array
// items and its object members. openapi-typescript 7 renders every component as a property
// of one `components` interface, and a property whose type refers to itself through an
// array element (`components["schemas"]["JsonValue"][]`) is an error TypeScript cannot get
// round (TS2502: TypeScript defers only object members and type aliases' arrays): the
// generated file failed `tsc`, and with skipLibCheck `Task.result` silently became `any`.
// Recursion through object members is fine. So the same values are described in a form
// that recurses only through objects: an array's items are typed one level deep, and an
// array directly inside an array holds any JSON value. Every JSON value still validates.

type SchemaObject = Record<string, unknown>;

const SCALARS: SchemaObject[] = [{ type: 'string' }, { type: 'number' }, { type: 'boolean' }, { type: 'null' }];
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

export const jsonValueComponents: Record<string, SchemaObject> = {
  JsonValue: {
    description: 'Any JSON value.',
    anyOf: [...SCALARS, ref('JsonObject'), ref('JsonArray')],
  },
  JsonObject: {
    description: 'A JSON object; each member is any JSON value.',
    type: 'object',
    additionalProperties: ref('JsonValue'),
  },
  JsonArray: {
    description:
      'A JSON array. Its items are described one level deep: an array directly inside an array holds any JSON values (`items` unspecified), ' +
      'because generated TypeScript types cannot refer to themselves through an array element (docs/api.md, "JSON values in the OpenAPI document").',
    type: 'array',
    items: { anyOf: [...SCALARS, ref('JsonObject'), { type: 'array' }] },
  },
};

/** What zod-openapi writes for `z.json()` under the name `self`: the schema replaced by JsonValue. */
export function isZodJsonSchema(schema: unknown, self: string): boolean {
  const selfRef = ref(self);
  const zodJson = { anyOf: [...SCALARS, { type: 'array', items: selfRef }, { type: 'object', propertyNames: { type: 'string' }, additionalProperties: selfRef }] };
  return JSON.stringify(schema) === JSON.stringify(zodJson);
}
