// A process that stores 1 MiB payloads in a file payload store until it is killed, printing each address once its
// put has returned: the file store's crash test SIGKILLs it mid-write. Usage: file-store-writer.ts <directory>
import { randomBytes } from 'node:crypto';
import { createFilePayloadStore } from '../../src/store/file-payload-store.js';

const directory = process.argv[2];
if (!directory) throw new Error('usage: file-store-writer.ts <directory>');
const store = createFilePayloadStore({ directory });
for (;;) {
  const ref = await store.put({ tenantId: 'acme', runId: 'run-1' }, randomBytes(1024 * 1024));
  process.stdout.write(`${ref}\n`);
}
