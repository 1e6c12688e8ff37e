import { z } from 'zod';
import type { JsonSchema } from './tool-catalog.js';

/**
 * Zod's `fromJSONSchema` follows a local `$ref` only to the whole schema (`#`) or to one entry of its definitions
 * (`#/$defs/name`, or `#/definitions/name` under a draft-07 or draft-04 `$schema`); any other pointer, such as the
 * `#/properties/a` that zod-to-json-schema writes for a schema used twice or recursively, fails the whole schema,
 * so the tool was left out. {@link withRefsZodFollows} moves what such pointers point at into the definitions.
 */

/** Keywords whose values are data, not schemas: a `$ref` inside them is a value, never rewritten. */
const dataKeywords = new Set(['const', 'enum', 'default', 'examples']);

/** Keywords whose values map names to schemas: their keys are names (a property may be called `default`). */
const nameMaps = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);

/** The `$schema` values Zod reads as drafts whose definitions are `definitions`; any other is read as 2020-12. */
const draftsWithDefinitions = new Set([
  'http://json-schema.org/draft-07/schema#',
  'http://json-schema.org/draft-04/schema#',
]);

type JsonObject = Record<string, unknown>;

/**
 * The schema with every local `$ref` Zod cannot follow rewritten to an entry of its definitions holding what it
 * points at (a definition of its own where it points elsewhere), so recursion through it still works. A schema Zod
 * compiles as it is comes back as it is, so every schema that compiled before is read the same; a pointer that
 * points at nothing is left for Zod to refuse, and one that leads back to itself through `$ref`s alone is refused.
 */
export function withRefsZodFollows(schema: JsonSchema): JsonSchema {
  const reading = zodReading(schema);
  const unfollowed = (ref: string) => !reading.followsSomewhere(ref) && pointedAt(schema, ref) !== undefined;
  if (!someRef(schema, unfollowed) || compilesAsIs(schema)) return schema;
  const rewritten = JSON.parse(JSON.stringify(schema)) as JsonObject;
  const definitions = ((rewritten[reading.container] as JsonObject | undefined) ??= {});
  const moved = new Map<string, string>();
  const rewrite = (ref: string): string => {
    if (reading.followsExactly(ref) || pointedAt(schema, ref) === undefined) return ref;
    const known = moved.get(ref);
    if (known !== undefined) return known;
    const key = freshKey(definitions);
    const target = `#/${reading.defsKey}/${key}`;
    // Taken before its content is rewritten: a pointer inside it finds this one, and another gets another key.
    moved.set(ref, target);
    definitions[key] = true;
    definitions[key] = withRefsRewritten(copyOfSubschema(pointedAt(schema, ref)), rewrite);
    return target;
  };
  withRefsRewritten(rewritten, rewrite);
  refuseRefOnlyCycles(definitions, moved, reading.defsKey);
  return rewritten;
}

/**
 * Whether Zod compiles the schema as it is (it follows references as it builds): such a schema is never rewritten,
 * whatever pointers it also holds, so a check recorded runs made with it stays the same. A schema it refuses is
 * rewritten, and Zod's refusal of the rewritten one is the one reported.
 */
function compilesAsIs(schema: JsonSchema): boolean {
  try {
    z.fromJSONSchema(schema);
    return true;
  } catch {
    return false;
  }
}

/** What Zod reads a `$ref` of `schema` as: the whole schema, or the definition its pointer names; else undefined. */
export function zodRefTarget(schema: JsonSchema, ref: string): unknown {
  return zodReading(schema).target(ref);
}

/** How Zod reads a schema's references: where its definitions are, and the prefix its pointers to them take. */
function zodReading(schema: JsonSchema) {
  const defsKey = draftsWithDefinitions.has(String(schema['$schema'])) ? 'definitions' : '$defs';
  // Zod looks names up in `$defs`, else in `definitions`, whichever prefix the pointer must take.
  const container = schema['$defs'] ? '$defs' : schema['definitions'] ? 'definitions' : '$defs';
  const definitions = (schema[container] ?? {}) as JsonObject;
  const named = (ref: string) => {
    const path = ref.slice(1).split('/').filter(Boolean);
    // Decoded as Zod decodes a definition's name: `~1` and `~0` only.
    const name = path[1]?.replace(/~1/g, '/').replace(/~0/g, '~');
    const found = path[0] === defsKey && name !== undefined && Object.hasOwn(definitions, name);
    return { root: path.length === 0, path, found, name };
  };
  return {
    defsKey,
    container,
    /**
     * Zod follows it somewhere (to the whole schema, or to a definition even when the pointer goes on inside it), or
     * it is not local, which Zod refuses whatever is done here.
     */
    followsSomewhere: (ref: string) => {
      const { root, found } = named(ref);
      return !ref.startsWith('#') || root || found;
    },
    /** The schema Zod follows it to (whatever follows a definition's name in its pointer), or undefined. */
    target: (ref: string): unknown => {
      const { root, found, name } = named(ref);
      if (!ref.startsWith('#')) return undefined;
      return root ? schema : found && name !== undefined ? definitions[name] : undefined;
    },
    /** Zod follows it to exactly what it points at. */
    followsExactly: (ref: string) => {
      const { root, path, found } = named(ref);
      return !ref.startsWith('#') || root || (found && path.length === 2);
    },
  };
}

/** What a local JSON pointer (`#/properties/a`) points at in `schema`, or undefined when it is not one or finds none. */
function pointedAt(schema: JsonSchema, ref: string): unknown {
  if (!ref.startsWith('#/')) return undefined;
  let node: unknown = schema;
  for (const segment of ref.slice(2).split('/')) {
    const key = decodeSegment(segment);
    if (typeof node !== 'object' || node === null || !Object.hasOwn(node, key)) return undefined;
    node = (node as JsonObject)[key];
  }
  return typeof node === 'object' || typeof node === 'boolean' ? node : undefined;
}

/** A pointer segment as a key: percent-decoded (it is a URI fragment), then `~1` and `~0` (RFC 6901). */
function decodeSegment(segment: string): string {
  let decoded = segment;
  try {
    decoded = decodeURIComponent(segment);
  } catch {
    // Not percent-encoded after all: read as written.
  }
  return decoded.replace(/~1/g, '/').replace(/~0/g, '~');
}

/** A copy of a subschema to keep as a definition; `false` as `{ not: {} }`, which Zod's lookup does not take for none. */
function copyOfSubschema(subschema: unknown): unknown {
  return subschema === false ? { not: {} } : (JSON.parse(JSON.stringify(subschema)) as unknown);
}

function freshKey(definitions: JsonObject): string {
  let index = 1;
  while (Object.hasOwn(definitions, `relay-e-ref-${index}`)) index += 1;
  return `relay-e-ref-${index}`;
}

/**
 * Refuses a moved definition that is a `$ref` leading back to itself through `$ref`s alone (`a: { $ref:
 * '#/properties/a' }`): it describes no value, and checking a call against it would never end.
 */
function refuseRefOnlyCycles(definitions: JsonObject, moved: ReadonlyMap<string, string>, defsKey: string): void {
  const prefix = `#/${defsKey}/`;
  for (const [ref, target] of moved) {
    const seen = new Set([target]);
    let next = (definitions[target.slice(prefix.length)] as JsonObject | undefined)?.['$ref'];
    while (typeof next === 'string' && next.startsWith(prefix)) {
      if (seen.has(next)) throw new Error(`the $ref '${ref}' leads back to itself through $refs alone`);
      seen.add(next);
      next = (definitions[next.slice(prefix.length)] as JsonObject | undefined)?.['$ref'];
    }
  }
}

/** Calls `visit` with every subschema below `node` (itself included), skipping data and reading name maps' values. */
function forEachSubschema(node: unknown, visit: (subschema: JsonObject) => void): void {
  if (Array.isArray(node)) {
    for (const item of node) forEachSubschema(item, visit);
    return;
  }
  if (typeof node !== 'object' || node === null) return;
  const subschema = node as JsonObject;
  visit(subschema);
  for (const [key, value] of Object.entries(subschema)) {
    if (dataKeywords.has(key)) continue;
    const named = nameMaps.has(key) && typeof value === 'object' && value !== null && !Array.isArray(value);
    if (named) for (const entry of Object.values(value)) forEachSubschema(entry, visit);
    else forEachSubschema(value, visit);
  }
}

/** Whether any subschema's `$ref` satisfies `test`. */
function someRef(schema: JsonSchema, test: (ref: string) => boolean): boolean {
  let found = false;
  forEachSubschema(schema, (subschema) => {
    const ref = subschema['$ref'];
    if (typeof ref === 'string' && test(ref)) found = true;
  });
  return found;
}

/** `node` with each subschema's `$ref` replaced by what `rewrite` makes of it, changed in place. */
function withRefsRewritten(node: unknown, rewrite: (ref: string) => string): unknown {
  forEachSubschema(node, (subschema) => {
    const ref = subschema['$ref'];
    if (typeof ref === 'string') subschema['$ref'] = rewrite(ref);
  });
  return node;
}
