import { userInfo } from 'node:os';
import { usageError } from './cli-error.js';
import { envSetting } from './env-setting.js';

/** The help line of `--approver`, the same for every command that decides. */
export const approverOptionHelp = `--approver NAME        recorded with the decision (default $USER, else this OS account's name;
                         with neither, pass --approver)`;

/** `--approver`, else $USER, else the OS account's name; a usage error when none is known. */
export function resolveApprover(
  flag: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
  accountName: () => string = () => userInfo().username,
): string {
  const named = flag ?? envSetting(env, 'USER');
  if (named !== undefined) return named;
  try {
    const account = accountName();
    if (account !== '') return account;
  } catch {
    // No passwd entry for this uid (common in containers): fall through to the error that says what to pass.
  }
  throw usageError('no approver to record: $USER is unset and this OS account has no name; pass --approver NAME');
}
