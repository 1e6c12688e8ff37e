// Imports the modules named on the command line, then prints every file Node loaded as a JSON array: the entry-point
// tests run it in a fresh process to see what importing an entry point costs.
import { createRequire, registerHooks } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

const loaded = new Set<string>();
registerHooks({
  resolve(specifier, context, nextResolve) {
    const resolved = nextResolve(specifier, context);
    if (resolved.url.startsWith('file:')) loaded.add(fileURLToPath(resolved.url));
    return resolved;
  },
});

for (const specifier of process.argv.slice(2)) {
  await import(specifier.startsWith('.') || specifier.startsWith('/') ? pathToFileURL(specifier).href : specifier);
}
for (const file of Object.keys(createRequire(import.meta.url).cache)) loaded.add(file);
process.stdout.write(`${JSON.stringify([...loaded].sort())}\n`);
