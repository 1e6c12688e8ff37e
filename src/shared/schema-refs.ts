import type { JsonSchema } from './tool-catalog.js';

/**
 * Zod's `fromJSONSchema` follows a local `$ref` only to the whole schema (`#`) or to one entry of its definitions
 * (`#/$defs/name`, or `#/definitions/name` under a draft-07 or draft-04 `$schema`); any other pointer, such as the
 * `#/properties/a` that zod-to-json-schema writes for a schema used twice or recursively, fails the whole schema,
 * so the tool was left out. {@link withRefsZodFollows} moves what such pointers point at into the definitions.
 */

/** Keywords whose values are data, not schemas: a `$ref` inside them is a value, never rewritten. */
const dataKeywords = new Set(['const', 'enum', 'default', 'examples']);

/** The `$schema` values Zod reads as drafts whose definitions are `definitions`; any other is read as 2020-12. */
const draftsWithDefinitions = new Set([
  'http://json-schema.org/draft-07/schema#',
  'http://json-schema.org/draft-04/schema#',
]);

type JsonObject = Record<string, unknown>;

/**
 * The schema with every local `$ref` Zod cannot follow rewritten to an entry of its definitions holding what it
 * points at (a definition of its own where it points elsewhere), so recursion through it still works. A schema
 * whose references Zod follows already is returned as it is, so every schema that compiled before compiles the same;
 * a pointer that points at nothing is left for Zod to refuse.
 */
export function withRefsZodFollows(schema: JsonSchema): JsonSchema {
  const reading = zodReading(schema);
  const unfollowed = (ref: string) => !reading.followsSomewhere(ref) && pointedAt(schema, ref) !== undefined;
  if (!someRef(schema, unfollowed)) return schema;
  const rewritten = JSON.parse(JSON.stringify(schema)) as JsonObject;
  const definitions = ((rewritten[reading.container] as JsonObject | undefined) ??= {});
  const moved = new Map<string, string>();
  const rewrite = (ref: string): string => {
    if (reading.followsExactly(ref) || pointedAt(schema, ref) === undefined) return ref;
    const known = moved.get(ref);
    if (known !== undefined) return known;
    const key = freshKey(definitions);
    const target = `#/${reading.defsKey}/${key}`;
    // Set before its content is rewritten, so a reference to itself inside it finds it.
    moved.set(ref, target);
    definitions[key] = rewriteRefs(JSON.parse(JSON.stringify(pointedAt(schema, ref))) as unknown, rewrite);
    return target;
  };
  return rewriteRefs(rewritten, rewrite) as JsonSchema;
}

/** How Zod reads a schema's references: where its definitions are, and the prefix its pointers to them take. */
function zodReading(schema: JsonSchema) {
  const defsKey = draftsWithDefinitions.has(String(schema['$schema'])) ? 'definitions' : '$defs';
  // Zod looks names up in `$defs`, else in `definitions`, whichever prefix the pointer must take.
  const container = schema['$defs'] ? '$defs' : schema['definitions'] ? 'definitions' : '$defs';
  const definitions = (schema[container] ?? {}) as JsonObject;
  const named = (ref: string) => {
    const path = ref.slice(1).split('/').filter(Boolean);
    const name = path[1] === undefined ? undefined : decodeSegment(path[1]);
    const found = path[0] === defsKey && name !== undefined && Object.hasOwn(definitions, name);
    return { root: path.length === 0, path, found };
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

function freshKey(definitions: JsonObject): string {
  let index = 1;
  while (Object.hasOwn(definitions, `relay-e-ref-${index}`)) index += 1;
  return `relay-e-ref-${index}`;
}

/** Whether any `$ref` in the schema (outside data keywords) satisfies `test`. */
function someRef(node: unknown, test: (ref: string) => boolean): boolean {
  if (Array.isArray(node)) return node.some((item) => someRef(item, test));
  if (typeof node !== 'object' || node === null) return false;
  return Object.entries(node).some(([key, value]) =>
    key === '$ref' && typeof value === 'string' ? test(value) : !dataKeywords.has(key) && someRef(value, test),
  );
}

/** `node` with each `$ref` (outside data keywords) replaced by what `rewrite` makes of it, changed in place. */
function rewriteRefs(node: unknown, rewrite: (ref: string) => string): unknown {
  if (Array.isArray(node)) {
    node.forEach((item) => rewriteRefs(item, rewrite));
  } else if (typeof node === 'object' && node !== null) {
    const object = node as JsonObject;
    for (const [key, value] of Object.entries(object)) {
      if (key === '$ref' && typeof value === 'string') object[key] = rewrite(value);
      else if (!dataKeywords.has(key)) rewriteRefs(value, rewrite);
    }
  }
  return node;
}
