import type { JsonSchema } from './tool-catalog.js';
import { zodRefTarget } from './schema-refs.js';

type JsonObject = Record<string, unknown>;

/** Keywords whose subschemas Zod checks against the same value as the schema holding them. */
const sameValueKeywords = ['allOf', 'anyOf', 'oneOf'] as const;

/** Keywords whose subschemas Zod checks against a part of the value (a property, an item, a key). */
const innerValueKeywords = ['additionalProperties', 'propertyNames', 'items', 'contains'] as const;
const innerValueLists = ['prefixItems', 'items'] as const;
const innerValueMaps = ['properties', 'patternProperties'] as const;

/**
 * The first `$ref`, in the part of `schema` a check reaches, that leads back to where it is while checking the same
 * value: through `$ref`s and `allOf`, `anyOf` or `oneOf` alone (`a: { anyOf: [{ $ref: '#/$defs/a' }, …] }`), as Zod
 * follows them. A check against it never ends (it exhausts the stack), whatever the input. Undefined when every loop
 * passes through a property, an item or a key, which ends with the input.
 */
export function endlessRef(schema: JsonSchema): string | undefined {
  const reached = new Set<JsonObject>();
  const visit = (node: unknown): void => {
    if (!isSchemaObject(node) || reached.has(node)) return;
    reached.add(node);
    for (const next of [...sameValueSchemas(schema, node), ...innerValueSchemas(node)]) visit(next);
  };
  visit(schema);
  const done = new Set<JsonObject>();
  for (const start of reached) {
    const found = loopFrom(schema, start, [], done);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** A depth-first walk of same-value steps from `node`: the `$ref` of a loop back onto `path`, if any. */
function loopFrom(schema: JsonSchema, node: JsonObject, path: JsonObject[], done: Set<JsonObject>): string | undefined {
  const onPath = path.indexOf(node);
  if (onPath >= 0)
    return path
      .slice(onPath)
      .map(refOf)
      .find((ref) => ref !== undefined);
  if (done.has(node)) return undefined;
  path.push(node);
  for (const next of sameValueSchemas(schema, node)) {
    const found = isSchemaObject(next) ? loopFrom(schema, next, path, done) : undefined;
    if (found !== undefined) return found;
  }
  path.pop();
  done.add(node);
  return undefined;
}

/** The subschemas Zod checks the same value against: what its `$ref` points at, and its composition's branches. */
function sameValueSchemas(schema: JsonSchema, node: JsonObject): unknown[] {
  const ref = refOf(node);
  const branches = sameValueKeywords.flatMap((keyword) => listAt(node, keyword));
  return ref === undefined ? branches : [zodRefTarget(schema, ref), ...branches];
}

/** The subschemas Zod checks parts of the value against; none beside a `$ref`, which Zod reads instead of them. */
function innerValueSchemas(node: JsonObject): unknown[] {
  if (refOf(node) !== undefined) return [];
  return [
    ...innerValueKeywords.map((keyword) => node[keyword]),
    ...innerValueLists.flatMap((keyword) => listAt(node, keyword)),
    ...innerValueMaps.flatMap((keyword) => (isSchemaObject(node[keyword]) ? Object.values(node[keyword]) : [])),
  ];
}

function listAt(node: JsonObject, keyword: string): unknown[] {
  const value = node[keyword];
  return Array.isArray(value) ? (value as unknown[]) : [];
}

function refOf(node: JsonObject): string | undefined {
  // Zod reads an empty `$ref` as none.
  return typeof node['$ref'] === 'string' && node['$ref'] !== '' ? node['$ref'] : undefined;
}

function isSchemaObject(node: unknown): node is JsonObject {
  return typeof node === 'object' && node !== null && !Array.isArray(node);
}
