import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { RelayError } from '../shared/errors.js';

/**
 * The file at `relativePath` (no extension) from the module whose URL is `moduleUrl`: its `.ts` when running from
 * source, its `.js` from `dist`. Temporal takes workflows and converters by path, so Relay-E finds its own files so.
 */
export function moduleFileNextTo(moduleUrl: string, relativePath: string): string {
  for (const extension of ['.ts', '.js']) {
    const path = fileURLToPath(new URL(`${relativePath}${extension}`, moduleUrl));
    if (existsSync(path)) return path;
  }
  throw new RelayError('invalid_input', `Cannot find ${relativePath} next to ${fileURLToPath(moduleUrl)}`);
}
