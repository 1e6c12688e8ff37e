/** The flags of a command that choose which server, namespace, task queue and config it works with. */
export interface ConnectionHintValues {
  address?: string | undefined;
  namespace?: string | undefined;
  profile?: string | undefined;
  'task-queue'?: string | undefined;
  config?: string | undefined;
}

const hintedFlags = ['address', 'namespace', 'profile', 'task-queue', 'config'] as const;

/**
 * The connection flags a command was given, as its printed hints repeat them (` --address 127.0.0.1:17233
 * --task-queue shop`), or `''` when it was given none: a hint run as printed then reaches the server, namespace, task
 * queue and config the command reached, not the defaults (another server, or none). The environment is not repeated:
 * a hint runs where it was printed, with the same environment.
 */
export function connectionHintFlags(values: ConnectionHintValues & Record<string, unknown>): string {
  return hintedFlags
    .filter((flag) => values[flag] !== undefined)
    .map((flag) => ` --${flag} ${shellWord(values[flag] ?? '')}`)
    .join('');
}

/** `text` as one word of a POSIX shell: as it is when it needs no quoting, else in single quotes. */
export function shellWord(text: string): string {
  if (/^[\w@%+=:,./-]+$/.test(text)) return text;
  return `'${text.replaceAll("'", `'\\''`)}'`;
}
