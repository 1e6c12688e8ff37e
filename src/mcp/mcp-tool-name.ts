import { createHash } from 'node:crypto';
import { RelayError } from '../shared/errors.js';

const maxToolNameLength = 64;

/**
 * The name a model calls an MCP tool by: the server's prefix, `_`, then the tool's own name with every character
 * the providers refuse (anything but letters, digits, `_` and `-`) mapped to `_`. A name over 64 characters is cut
 * and ends with a hash of the original, so two long names stay apart.
 */
export function toModelToolName(prefix: string, toolName: string): string {
  const mapped = `${prefix === '' ? '' : `${prefix}_`}${toolName.replace(/[^a-zA-Z0-9_-]/g, '_')}`;
  if (mapped.length <= maxToolNameLength) return mapped;
  const hash = createHash('sha256').update(toolName).digest('hex').slice(0, 8);
  return `${mapped.slice(0, maxToolNameLength - hash.length - 1)}_${hash}`;
}

/**
 * Maps every tool name of one server, model name to original, so each call finds its tool on the server again.
 * Two tools that map to the same name throw `RelayError('duplicate_tool')` naming both: guessing which one the
 * model meant could run the wrong tool.
 */
export function mapToolNames(server: string, prefix: string, toolNames: readonly string[]): Map<string, string> {
  const originals = new Map<string, string>();
  for (const toolName of toolNames) {
    const modelName = toModelToolName(prefix, toolName);
    const clash = originals.get(modelName);
    if (clash !== undefined) {
      throw new RelayError(
        'duplicate_tool',
        `MCP server '${server}': tools '${clash}' and '${toolName}' both map to the tool name '${modelName}'; ` +
          'rename one on the server or give the server another prefix',
        { details: { server, toolNames: [clash, toolName], toolName: modelName } },
      );
    }
    originals.set(modelName, toolName);
  }
  return originals;
}
