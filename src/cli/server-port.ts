import { usageError } from './cli-error.js';

/** The API port when neither `--port` nor RELAY_E_PORT says otherwise. */
export const defaultApiPort = 8787;

/** How a server's `--port` is set besides the flag, and what else may hold it, for the message when it is busy. */
export interface PortSetting {
  /** The environment variable read when the flag is not given. */
  variable: string;
  /** The port when neither is given. */
  fallback: number;
  /** Who else listens there, as the busy-port message guesses. */
  usedBy: string;
}

const apiPort: PortSetting = {
  variable: 'RELAY_E_PORT',
  fallback: defaultApiPort,
  usedBy: 'another relay-e dev or serve',
};

/**
 * Turns "address in use" into a sentence naming the flag that picks another port; other errors pass through.
 */
export function explainBusyPort(
  error: unknown,
  port: number,
  host: string,
  { variable, usedBy }: Pick<PortSetting, 'variable' | 'usedBy'> = apiPort,
): unknown {
  if ((error as NodeJS.ErrnoException | undefined)?.code !== 'EADDRINUSE') return error;
  return usageError(
    `Port ${port} on ${host} is already in use (${usedBy}?). ` +
      `Pick another with --port N or ${variable}=N (0 picks a free one).`,
  );
}

/** Reads `--port`, else the setting's variable (RELAY_E_PORT for the API), as a TCP port (0 picks a free one). */
export function readPort(
  flag: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
  { variable, fallback }: Pick<PortSetting, 'variable' | 'fallback'> = apiPort,
): number {
  const text = flag ?? env[variable];
  if (text === undefined || text === '') return fallback;
  const port = Number(text);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw usageError(`Invalid port '${text}'`);
  return port;
}
