import { readFileSync } from 'node:fs';

/** True while `pid` runs: a zombie its parent has not reaped yet counts as stopped. */
export function isRunning(pid: number): boolean {
  let stat: string | undefined;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
  }
  // The state follows the command name, which is in parentheses and may itself hold any character.
  if (stat !== undefined) return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
