import { usageError } from './cli-error.js';

/** The API port when neither `--port` nor RELAY_E_PORT says otherwise. */
export const defaultApiPort = 8787;

/**
 * How a server's `--port` and `--host` are set besides the flags, and what else may hold its port, for the messages
 * when it cannot listen.
 */
export interface ListenSetting {
  /** The environment variable read when `--port` is not given. */
  variable: string;
  /** The port when neither is given. */
  fallback: number;
  /** Who else listens there, as the busy-port message guesses. */
  usedBy: string;
  /** The environment variable read when `--host` is not given; undefined when only the flag sets it. */
  hostVariable?: string;
}

const apiListen: ListenSetting = {
  variable: 'RELAY_E_PORT',
  fallback: defaultApiPort,
  usedBy: 'another relay-e dev or serve',
  hostVariable: 'RELAY_E_HOST',
};

/** Where a server was told to listen: the port, the host, and whether `--host` gave it (else its variable did). */
export interface ListenAddress {
  port: number;
  host: string;
  hostFromFlag: boolean;
}

/** Listen errors of a host this machine cannot listen on: not one of its addresses, or an address Node refuses. */
const unbindableHostCodes: ReadonlySet<string> = new Set(['EADDRNOTAVAIL', 'EAFNOSUPPORT', 'EINVAL']);

/**
 * Turns a listen that failed on the port (in use) or the host (not this machine's address, a name that does not
 * resolve) into a sentence naming the flag, and the variable, that change it; other errors pass through.
 */
export function explainListenError(
  error: unknown,
  { port, host, hostFromFlag }: ListenAddress,
  { variable, usedBy, hostVariable }: Pick<ListenSetting, 'variable' | 'usedBy' | 'hostVariable'> = apiListen,
): unknown {
  const { code, syscall } = (error ?? {}) as NodeJS.ErrnoException;
  if (code === 'EADDRINUSE') {
    return usageError(
      `Port ${port} on ${host} is already in use (${usedBy}?). ` +
        `Pick another with --port N or ${variable}=N (0 picks a free one).`,
    );
  }
  if (code === 'EACCES' && syscall === 'listen') {
    return usageError(
      `This user may not listen on port ${port} (EACCES: ports below 1024 need privileges). ` +
        `Pick another with --port N or ${variable}=N, and put a proxy in front for port ${port}.`,
    );
  }
  const reason =
    syscall === 'getaddrinfo'
      ? 'the name does not resolve'
      : syscall === 'listen' && code !== undefined && unbindableHostCodes.has(code)
        ? 'it is not an address of this machine'
        : undefined;
  if (reason === undefined) return error;
  const given = !hostFromFlag && hostVariable !== undefined ? `${hostVariable}=${host}` : `--host ${host}`;
  const flags = `--host IP${hostVariable !== undefined ? ` or ${hostVariable}=IP` : ''}`;
  return usageError(
    `Cannot listen on ${given}: ${reason} (${code}). Give an address of this machine with ${flags} ` +
      '(127.0.0.1 for this machine only, 0.0.0.0 for every interface).',
  );
}

/** Reads `--port`, else the setting's variable (RELAY_E_PORT for the API), as a TCP port (0 picks a free one). */
export function readPort(
  flag: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
  { variable, fallback }: Pick<ListenSetting, 'variable' | 'fallback'> = apiListen,
): number {
  const text = flag ?? env[variable];
  if (text === undefined || text === '') return fallback;
  const port = Number(text);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw usageError(`Invalid port '${text}'`);
  return port;
}
