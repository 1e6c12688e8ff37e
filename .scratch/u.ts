import { compileToolSchema } from '../src/shared/compile-tool-schema.js';
const s = compileToolSchema({ type: 'object', properties: { xs: { type: 'array', uniqueItems: true, items: { type: 'array' } } } });
for (const n of [1000, 4000, 16000]) {
  const xs = Array.from({ length: n }, (_, i) => [i]);
  const t = performance.now(); const r = s.safeParse({ xs }); console.log(n, r.success, (performance.now() - t).toFixed(0), 'ms', JSON.stringify({ xs }).length, 'bytes');
}
const s2 = compileToolSchema({ type: 'object', properties: { xs: { type: 'array', uniqueItems: true, items: { type: 'string' } } } });
for (const n of [4000, 16000, 64000]) {
  const xs = Array.from({ length: n }, (_, i) => 'a' + i);
  const t = performance.now(); const r = s2.safeParse({ xs }); console.log('str', n, r.success, (performance.now() - t).toFixed(0), 'ms');
}
