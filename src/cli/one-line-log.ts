import { format } from 'node:util';
import type { LogEntry } from '@temporalio/worker';

/** The fields of a worker log entry that say which run and which step it is about. */
const namingFields = ['workflowId', 'workflowType', 'activityType', 'attempt'] as const;

/**
 * Writes a worker log entry as one line: the message, the fields that name the run, and the error as its chain of
 * messages. A run refused by its worker is one line in the console, not a stack trace; with `stacks` (the CLI sets
 * it from `RELAY_E_LOG_STACKS=1`) the error's stack follows on the next lines.
 */
export function writeOneLineLog(entry: LogEntry, options: { stacks: boolean; write: (line: string) => void }): void {
  const time = new Date(Number(entry.timestampNanos / 1_000_000n)).toISOString();
  const meta: Record<string, unknown> = entry.meta ?? {};
  const fields = namingFields.flatMap((key) => (meta[key] === undefined ? [] : [`${key}=${format('%s', meta[key])}`]));
  const error = meta['error'];
  const parts = [`${time} [${entry.level}] ${entry.message}`, ...fields];
  if (error !== undefined) parts.push(`error=${errorChain(error)}`);
  options.write(`${parts.join(' ')}\n`);
  if (options.stacks && error instanceof Error && error.stack) options.write(`${error.stack}\n`);
}

/** `Name(type): message ← cause's name: message …`, on one line. */
function errorChain(error: unknown): string {
  const links: string[] = [];
  for (let link: unknown = error; link !== undefined && links.length < 5;) {
    if (!(link instanceof Error)) {
      links.push(format('%o', link).replace(/\s+/g, ' '));
      break;
    }
    const type = 'type' in link && typeof link.type === 'string' ? `(${link.type})` : '';
    links.push(`${link.name}${type}: ${link.message.replace(/\s+/g, ' ')}`);
    link = link.cause;
  }
  return links.join(' ← ');
}

/**
 * Relay-E's own lines in a CLI worker (the payload janitor's, the payload store's), in the shape of the SDK's one-line
 * log beside them: `<ISO time> [INFO] message`. Info goes to standard output and warnings to standard error, as the
 * console the stores default to writes them.
 */
export function cliLineLogger(
  write: { out: (line: string) => void; err: (line: string) => void } = {
    out: (line) => process.stdout.write(line),
    err: (line) => process.stderr.write(line),
  },
): Pick<Console, 'info' | 'warn'> {
  const line = (level: string, parts: unknown[]) => `${new Date().toISOString()} [${level}] ${format(...parts)}\n`;
  return {
    info: (...parts: unknown[]) => write.out(line('INFO', parts)),
    warn: (...parts) => write.err(line('WARN', parts)),
  };
}
