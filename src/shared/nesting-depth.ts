/**
 * Whether `value` nests objects and arrays (each one a level) more than `limit` levels deep. Measured without
 * recursion: the value may be nested far deeper than the stack reaches, which is why it is asked.
 */
export function nestedDeeperThan(value: unknown, limit: number): boolean {
  const pending: Array<{ node: unknown; depth: number }> = [{ node: value, depth: 0 }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { node, depth } = next;
    if (typeof node !== 'object' || node === null) continue;
    if (depth === limit) return true;
    for (const child of Object.values(node)) pending.push({ node: child, depth: depth + 1 });
  }
  return false;
}

/**
 * `value` with every object and array `limit` levels down emptied (`{}`, `[]`): still nested more than `limit` levels,
 * so a check refuses it as it would the whole, but shallow enough to encode as JSON, however deep `value` was.
 */
export function cutBelow(value: unknown, limit: number, depth = 0): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (depth === limit) return Array.isArray(value) ? [] : {};
  if (Array.isArray(value)) return value.map((item: unknown) => cutBelow(item, limit, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([key, child]) => [key, cutBelow(child, limit, depth + 1)]));
}
