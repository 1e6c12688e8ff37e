/**
 * A setting from the environment, or `undefined` when the variable is unset or empty: a shell's `VAR=` means "no
 * value", and an empty host, tenant or task queue would be taken as one (an empty host binds every interface).
 */
export function envSetting(env: NodeJS.ProcessEnv, name: string): string | undefined {
  return env[name] || undefined;
}
