import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { constants as fsConstants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { connect, createServer } from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect as connectTls } from 'node:tls';
import { Connection, isGrpcServiceError } from '@temporalio/client';
import type { TLSConfig } from '@temporalio/client';
import { grpcStatus, isTemporalUnavailable } from '../client/temporal-unavailable.js';
import { relaySearchAttributeDefinitions } from '../shared/search-attributes.js';

/** A search attribute to register at server start, as `temporal server start-dev --search-attribute` takes it. */
export interface DevServerSearchAttribute {
  name: string;
  type: 'Text' | 'Keyword' | 'Int' | 'Double' | 'Bool' | 'Datetime' | 'KeywordList';
}

/** Options of {@link startTemporalDevServer}. */
export interface TemporalDevServerOptions {
  /**
   * Address (`host:port`) of a Temporal server that is already running; when set, nothing is spawned and
   * `stop()` leaves that server alone.
   * @default undefined (spawn a new `temporal server start-dev`)
   */
  reuseAddress?: string;
  /**
   * How to reach the server at `reuseAddress` when it asks more than a plain connection (Temporal Cloud, a cluster
   * with TLS): the TLS settings and API key the worker and API connect with, so the check that it serves does too.
   * @default a plain connection
   */
  reuseCredentials?: ConnectionCredentials;
  /**
   * Path of the `temporal` CLI binary.
   * @default the `TEMPORAL_CLI_PATH` environment variable, else `temporal` found on `PATH`
   */
  executablePath?: string;
  /**
   * IP address the frontend (and the Web UI) binds to.
   * @default '127.0.0.1'
   */
  ip?: string;
  /**
   * Port of the frontend gRPC service.
   * @default a free port chosen at start
   */
  port?: number;
  /**
   * Namespace the caller will use; created at start when it is not `default`.
   * @default 'default'
   */
  namespace?: string;
  /**
   * Serve the Temporal Web UI; without it the server runs with `--headless`.
   * @default false
   */
  ui?: boolean;
  /**
   * Port of the Web UI, used only with `ui: true`.
   * @default a free port chosen at start
   */
  uiPort?: number;
  /**
   * SQLite file that keeps workflows across server restarts.
   * @default undefined (in memory: everything is lost when the server stops)
   */
  dbFilename?: string;
  /**
   * Search attributes registered at start.
   * @default relaySearchAttributeDefinitions
   */
  searchAttributes?: ReadonlyArray<DevServerSearchAttribute>;
  /**
   * Server log level.
   * @default 'warn'
   */
  logLevel?: 'debug' | 'info' | 'warn' | 'error' | 'never';
  /**
   * Dynamic config values passed as `--dynamic-config-value KEY=JSON`. Merged over
   * {@link liftedDispatchCap} unless `liftDispatchCap` is false.
   * @default {}
   */
  dynamicConfig?: Readonly<Record<string, unknown>>;
  /**
   * Lift the dev server's task-loading rate limit ({@link liftedDispatchCap}). Off only to measure the cap itself.
   * @default true
   */
  liftDispatchCap?: boolean;
  /**
   * Further arguments appended to `temporal server start-dev`, such as `--ui-codec-endpoint`.
   * @default []
   */
  extraArgs?: ReadonlyArray<string>;
  /**
   * How long to wait for the server to accept gRPC connections: far more than a cold start needs on an idle machine,
   * for loaded CI machines.
   * @default 60_000
   */
  startTimeoutMs?: number;
  /**
   * How long `stop()` waits after SIGTERM before it sends SIGKILL: long enough for the server's own graceful stop,
   * with a margin for loaded machines, so SIGKILL is kept for a server that hangs.
   * @default 10_000
   */
  stopGracePeriodMs?: number;
  /**
   * Receives the server's stdout and stderr as they arrive (for a `dev` command that shows them).
   * @default undefined (output is kept in memory only, to explain a failed start)
   */
  onOutput?: (chunk: string, stream: 'stdout' | 'stderr') => void;
  /**
   * Ends the start when aborted (relay-e dev on a Ctrl-C during its start-up): the wait stops, a spawned server is
   * stopped, and the promise rejects with the signal's reason.
   * @default undefined (the start goes on until the server serves or `startTimeoutMs` passes)
   */
  signal?: AbortSignal;
}

/** A running (or reused) Temporal server. */
export interface TemporalDevServer {
  /** Frontend gRPC address, `host:port`. */
  readonly address: string;
  readonly namespace: string;
  /** Web UI base URL when the UI is served by this process. */
  readonly uiUrl?: string;
  /** Process id of the spawned server; undefined when an existing server was reused. */
  readonly pid?: number;
  /**
   * Stops the spawned server (SIGTERM, then SIGKILL after the grace period); a no-op for a reused one.
   *
   * The server runs in its own process group, so Ctrl-C in a terminal does not reach it: only this process stops it.
   * A process that handles SIGINT, SIGTERM, SIGHUP, SIGQUIT or SIGUSR2 itself (has a listener of its own, as
   * `relay-e dev` does to stop its worker first) keeps the server until it calls `stop()`. A server still running
   * when the process exits (say through `process.exit` in that listener) is signalled then, and on a signal the
   * process does not handle it is signalled before the process ends by that signal; so no server outlives its process,
   * short of a SIGKILL of it.
   */
  stop(): Promise<void>;
}

/** Error thrown when the Temporal CLI cannot be found or the dev server does not come up. */
export class TemporalDevServerError extends Error {
  override readonly name = 'TemporalDevServerError';
}

/**
 * Something answers at the address to reuse, but not as a Temporal server: it does not speak gRPC there (a web server),
 * or it does not implement Temporal's service.
 */
export class NotTemporalServerError extends TemporalDevServerError {}

/** How a connection reaches a server that asks more than a plain connection: its TLS settings and API key. */
export interface ConnectionCredentials {
  tls?: TLSConfig | boolean;
  apiKey?: string;
}

/**
 * The server's TLS does not match the connection's: TLS is on (`clientTls`) and the server does not speak it, or the
 * server speaks TLS and the connection does not use it. Waiting does not change it; the connection's settings must.
 */
export class TlsMismatchError extends TemporalDevServerError {
  constructor(
    readonly address: string,
    readonly clientTls: boolean,
    options?: ErrorOptions,
  ) {
    super(
      clientTls
        ? `TLS is on for the connection to ${address}, but the server there does not speak TLS`
        : `The server at ${address} speaks TLS, but the connection to it does not use TLS`,
      options,
    );
  }
}

const outputTailBytes = 16_384;
const connectAttemptTimeoutMs = 2_000;
const connectRetryDelayMs = 200;
const portProbeDelayMs = 50;
const startAttemptsOnPortClash = 3;

/**
 * Dynamic config that lifts the dev server's dispatch cap. Each history shard's queue readers (transfer: activity and
 * workflow tasks; timer: timers and timeouts; visibility: search attributes) wait for a token from a limiter before
 * every load, 20 a second by default (Temporal's `service/history/queues/reader.go`, defaults in
 * `common/dynamicconfig/constants.go`). `start-dev` runs one shard, so that limit caps the whole server; a production
 * cluster spreads the same per-shard limit over many shards (`numHistoryShards`) instead. Values must be valid JSON
 * and unknown keys are accepted silently, so bench/step-overhead.ts checks the effect.
 */
export const liftedDispatchCap: Readonly<Record<string, number>> = {
  'history.transferProcessorMaxPollRPS': 1000,
  'history.timerProcessorMaxPollRPS': 1000,
  'history.visibilityProcessorMaxPollRPS': 1000,
};

/** The `--dynamic-config-value` arguments for the options' dynamic config. */
export function dynamicConfigArgs(
  options: Pick<TemporalDevServerOptions, 'dynamicConfig' | 'liftDispatchCap'>,
): string[] {
  const values = { ...(options.liftDispatchCap === false ? {} : liftedDispatchCap), ...options.dynamicConfig };
  return Object.entries(values).flatMap(([key, value]) => [
    '--dynamic-config-value',
    `${key}=${JSON.stringify(value)}`,
  ]);
}

/** Starts `temporal server start-dev` (or reuses a running server) and resolves once it accepts gRPC calls. */
export async function startTemporalDevServer(options: TemporalDevServerOptions = {}): Promise<TemporalDevServer> {
  const namespace = options.namespace ?? 'default';
  const startTimeoutMs = options.startTimeoutMs ?? 60_000;
  options.signal?.throwIfAborted();

  if (options.reuseAddress !== undefined) {
    const address = options.reuseAddress;
    const deadline = Date.now() + startTimeoutMs;
    await waitUntilServing({
      address,
      namespace,
      deadline,
      credentials: options.reuseCredentials,
      signal: options.signal,
    });
    return { address, namespace, stop: async () => {} };
  }

  const executablePath = await findTemporalExecutable(options.executablePath);
  // A port picked at start (here, or by the CLI for its HTTP, metrics and internal services) can be taken by
  // someone else before the server binds it; try again, with new picks. A port the caller chose is theirs to move.
  const callerPorts = [options.port, options.ui === true ? options.uiPort : undefined].filter((port) => port);
  for (let attempt = 1; ; attempt++) {
    try {
      return await spawnDevServer(executablePath, namespace, startTimeoutMs, options);
    } catch (error) {
      if (!(error instanceof DevServerPortClashError)) throw error;
      const callersPort = error.port !== undefined && callerPorts.includes(error.port);
      if (attempt >= startAttemptsOnPortClash || callersPort) throw error;
    }
  }
}

/**
 * There is no Temporal CLI to start a dev server with: a set-up problem (install it, or point TEMPORAL_CLI_PATH at
 * it), not a server that cannot be reached.
 */
export class TemporalCliNotFoundError extends TemporalDevServerError {}

/** The dev server could not bind a port; `port` is the one its log names (undefined when the log names none). */
export class DevServerPortClashError extends TemporalDevServerError {
  constructor(
    message: string,
    readonly port: number | undefined,
  ) {
    super(message);
  }
}

/** The port of the first `listen tcp HOST:PORT: bind: address already in use` in a server log. */
export function portInUse(log: string): number | undefined {
  const match = /listen tcp \S*:(\d+): bind: address already in use/i.exec(log);
  return match ? Number(match[1]) : undefined;
}

async function spawnDevServer(
  executablePath: string,
  namespace: string,
  startTimeoutMs: number,
  options: TemporalDevServerOptions,
): Promise<TemporalDevServer> {
  const ip = options.ip ?? '127.0.0.1';
  const port = options.port ?? (await findFreePort(ip));
  const uiPort = options.ui === true ? (options.uiPort ?? (await findFreePort(ip))) : undefined;
  const address = `${formatHost(ip)}:${port}`;
  const { child, exited, output, failed } = launch(
    executablePath,
    devServerArgs({ ip, port, uiPort, namespace }, options),
    options,
  );
  const stop = () => stopProcess(child, exited, options.stopGracePeriodMs ?? 10_000);

  const giveUp = new AbortController();
  const signal = options.signal ? AbortSignal.any([giveUp.signal, options.signal]) : giveUp.signal;
  try {
    const deadline = Date.now() + startTimeoutMs;
    await Promise.race([
      waitUntilServing({ address, namespace, deadline, spawned: { host: ip, port, output }, signal }),
      failed,
    ]);
  } catch (error) {
    await stop();
    throw error;
  } finally {
    // Ends the connection loop when the process exited first, so it does not keep the event loop alive.
    giveUp.abort();
  }

  let stopping: Promise<void> | undefined;
  return {
    address,
    namespace,
    ...(uiPort === undefined ? {} : { uiUrl: `http://${formatHost(ip)}:${uiPort}` }),
    ...(child.pid === undefined ? {} : { pid: child.pid }),
    stop: () => (stopping ??= stop()),
  };
}

/** How a spawned server ended: its exit, or the error of a spawn that never started it. */
interface ProcessEnd {
  code: number | null;
  signal: NodeJS.Signals | null;
  spawnError?: Error;
}

/**
 * Spawns the CLI, tracked until it ends; `failed` rejects once it ends (before serving, as the caller races it).
 * In its own process group, so a terminal's Ctrl-C (SIGINT to the whole foreground group) reaches only this process,
 * which decides when the server stops (see trackUntilExit). Not on Windows, where it opens a console.
 */
function launch(executablePath: string, args: string[], options: TemporalDevServerOptions) {
  const child = spawn(executablePath, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: process.platform !== 'win32',
  });
  const output = collectOutput(child, options.onOutput);
  const exited = new Promise<ProcessEnd>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    // A spawn that fails (EACCES, ENOENT) emits 'error' and never 'exit'.
    child.once('error', (spawnError) => {
      if (child.pid === undefined) resolve({ code: null, signal: null, spawnError });
    });
  });
  trackUntilExit(child, exited, options.dbFilename === undefined ? 'SIGKILL' : 'SIGTERM');
  const failed = exited.then(({ code, signal, spawnError }): never => {
    if (spawnError) {
      throw new TemporalDevServerError(`Could not run ${executablePath}: ${spawnError.message}`, { cause: spawnError });
    }
    throw exitedBeforeServing(`${executablePath} ${args.join(' ')}`, signal ?? `code ${code}`, output.tail());
  });
  failed.catch(() => {});
  return { child, exited, output, failed };
}

/** The arguments of `temporal server start-dev` for these ports and options. */
function devServerArgs(
  listen: { ip: string; port: number; uiPort: number | undefined; namespace: string },
  options: TemporalDevServerOptions,
): string[] {
  const { ip, port, uiPort, namespace } = listen;
  const args = ['server', 'start-dev', '--ip', ip, '--port', String(port), '--log-level', options.logLevel ?? 'warn'];
  if (uiPort === undefined) args.push('--headless');
  else args.push('--ui-port', String(uiPort));
  if (options.dbFilename !== undefined) args.push('--db-filename', options.dbFilename);
  if (namespace !== 'default') args.push('--namespace', namespace);
  for (const { name, type } of options.searchAttributes ?? relaySearchAttributeDefinitions) {
    args.push('--search-attribute', `${name}=${type}`);
  }
  return [...args, ...dynamicConfigArgs(options), ...(options.extraArgs ?? [])];
}

/** The error for a server that exited before it accepted connections: a port clash named as such, with its port. */
function exitedBeforeServing(command: string, how: string, tail: string): TemporalDevServerError {
  const message = `temporal server start-dev exited before it accepted connections (${how}).\nCommand: ${command}\n${tail}`;
  return /address already in use/i.test(tail)
    ? new DevServerPortClashError(message, portInUse(tail))
    : new TemporalDevServerError(message);
}

/** The Temporal CLI version Relay-E is tested with (scripts/env.sh builds the same). */
const temporalCliVersion = 'v1.5.1';

/** How to get the Temporal CLI, wherever Relay-E is used: a project that installed the package, or a checkout of it. */
const installTemporalCliHint =
  'Install the Temporal CLI (https://docs.temporal.io/cli: `brew install temporal`, a download, or with Go ' +
  `\`go install github.com/temporalio/cli/cmd/temporal@${temporalCliVersion}\`) and put \`temporal\` on PATH, or ` +
  'set TEMPORAL_CLI_PATH to its path. In a Relay-E checkout, `. scripts/env.sh && relay_e_ensure_temporal` ' +
  'builds it once and sets TEMPORAL_CLI_PATH.';

/**
 * Finds the Temporal CLI: the given path, then `TEMPORAL_CLI_PATH`, then `temporal` on `PATH`. Throws a
 * {@link TemporalCliNotFoundError} that says how to install one when there is none.
 */
export async function findTemporalExecutable(executablePath?: string): Promise<string> {
  const explicit = executablePath ?? process.env['TEMPORAL_CLI_PATH'];
  if (explicit !== undefined && explicit !== '') {
    if (await isExecutable(explicit)) return explicit;
    const source = executablePath === undefined ? 'TEMPORAL_CLI_PATH' : 'executablePath';
    throw new TemporalCliNotFoundError(
      `${source} is ${explicit}, which is not an executable file. ${installTemporalCliHint}`,
    );
  }
  for (const directory of (process.env['PATH'] ?? '').split(path.delimiter)) {
    if (directory === '') continue;
    const candidate = path.join(directory, 'temporal');
    if (await isExecutable(candidate)) return candidate;
  }
  throw new TemporalCliNotFoundError(
    `No Temporal CLI found (TEMPORAL_CLI_PATH is unset and no \`temporal\` on PATH). ${installTemporalCliHint}`,
  );
}

/** True when `file` is a regular file this process may execute (X_OK alone holds for a folder too). */
export async function isExecutable(file: string): Promise<boolean> {
  try {
    if (!(await stat(file)).isFile()) return false;
    await access(file, fsConstants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Asks the OS for a free TCP port; the small race until the server binds it is handled by retrying the start. */
export async function findFreePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen({ host, port: 0 }, () => {
      const address = server.address();
      server.close(() => {
        if (address !== null && typeof address === 'object') resolve(address.port);
        else reject(new TemporalDevServerError('Could not determine a free port'));
      });
    });
  });
}

function formatHost(ip: string): string {
  return ip.includes(':') ? `[${ip}]` : ip;
}

/** Where {@link waitUntilServing} looks, until when, and how. */
interface ServingCheck {
  address: string;
  namespace: string;
  deadline: number;
  /** Ends the wait: it rejects with the signal's reason. */
  signal?: AbortSignal | undefined;
  credentials?: ConnectionCredentials | undefined;
  /** The server this process spawned, still coming up; undefined for one to reuse, which already serves. */
  spawned?: { host: string; port: number; output: CollectedOutput };
}

/**
 * Asks for the namespace until the server answers or the deadline passes. A server to reuse is running: an answer
 * that waiting will not change (see {@link lastingFailure}) fails at once.
 */
async function waitUntilServing(check: ServingCheck): Promise<void> {
  const { address, namespace, deadline, spawned, signal } = check;
  let lastError: unknown;
  // Asked once: a server's TLS does not change between attempts, and each handshake may leave a line in its log.
  let handshakeAsked = false;
  while (Date.now() < deadline) {
    signal?.throwIfAborted();
    // gRPC backs off about a second after a refused connection, so wait for the port with cheap TCP probes first.
    if (spawned !== undefined && !(await isListening(spawned.host, spawned.port))) {
      await sleep(portProbeDelayMs);
      continue;
    }
    try {
      await describeNamespace(check, Math.max(1, Math.min(connectAttemptTimeoutMs, deadline - Date.now())));
      return;
    } catch (error) {
      if (spawned === undefined) {
        const mismatch = await findTlsMismatch(error, address, check.credentials, { handshake: !handshakeAsked });
        handshakeAsked ||= isTemporalUnavailable(error);
        const lasting = mismatch ?? lastingFailure(error, address, namespace);
        if (lasting) throw lasting;
      }
      // An attempt cut short by the overall deadline says less than what the server answered before it.
      if (lastError === undefined || !isDeadlineExceeded(error)) lastError = error;
    }
    await sleep(connectRetryDelayMs);
  }
  signal?.throwIfAborted();
  const reason = lastError instanceof Error ? lastError.message : 'port not listening';
  throw new TemporalDevServerError(
    `Temporal server at ${address} did not accept connections for namespace "${namespace}" in time (${reason}).` +
      (spawned === undefined ? '' : `\n${spawned.output.tail()}`),
    { cause: lastError },
  );
}

/** Whether a call ended at its own deadline (gRPC DEADLINE_EXCEEDED), not at the server's answer. */
function isDeadlineExceeded(error: unknown): boolean {
  return isGrpcServiceError(error) && Number(error.code) === grpcStatus.deadlineExceeded;
}

/** One namespace lookup on a new connection, with the server's own error when it fails. */
async function describeNamespace(check: ServingCheck, timeoutMs: number): Promise<void> {
  // Without the client's retry interceptor, which would hide the status behind a deadline; the caller retries.
  const connection = Connection.lazy({
    address: check.address,
    ...check.credentials,
    interceptors: [],
    connectTimeout: timeoutMs,
  });
  try {
    // The frontend can listen a moment before the namespace is registered.
    await connection.withDeadline(Date.now() + timeoutMs, () =>
      connection.workflowService.describeNamespace({ namespace: check.namespace }),
    );
  } finally {
    await connection.close();
  }
}

/**
 * The error to fail with at once when a running server's answer will not change by waiting: no such namespace, a
 * refused key or certificate, or a peer that is not a Temporal server (an HTTP/2 protocol error, an unknown method).
 */
function lastingFailure(error: unknown, address: string, namespace: string): TemporalDevServerError | undefined {
  if (!isGrpcServiceError(error)) return undefined;
  const code = Number(error.code);
  if (code === grpcStatus.unimplemented || (code === grpcStatus.unavailable && /protocol error/i.test(error.details))) {
    return new NotTemporalServerError(`${address} answers, but not as a Temporal server (${error.message})`, {
      cause: error,
    });
  }
  const refusals: number[] = [
    grpcStatus.invalidArgument,
    grpcStatus.notFound,
    grpcStatus.permissionDenied,
    grpcStatus.unauthenticated,
  ];
  if (!refusals.includes(code)) return undefined;
  return new TemporalDevServerError(
    `Temporal server at ${address} refused namespace "${namespace}" (${error.message})`,
    { cause: error },
  );
}

/** Whether the SDK's connection is on TLS for these credentials: with TLS settings, or with an API key and none. */
function usesTls(credentials: ConnectionCredentials | undefined): boolean {
  return (credentials?.tls ?? credentials?.apiKey !== undefined) !== false;
}

/**
 * An SDK error of a TLS connection that the server answered with something other than TLS: OpenSSL's "wrong version
 * number" (the client's grpc-js) or rustls' "InvalidContentType" (the worker's connection).
 */
const answeredWithoutTls = /wrong version number|InvalidContentType/i;

/**
 * The {@link TlsMismatchError} behind a failure to connect to `address` with these credentials, or undefined when the
 * failure has another cause. A TLS connection answered by a server without TLS says so in its error; a plain connection
 * to a TLS server only breaks, so the server is then asked for a TLS handshake (unless `handshake` is false).
 */
export async function findTlsMismatch(
  error: unknown,
  address: string,
  credentials: ConnectionCredentials | undefined,
  { handshake = true }: { handshake?: boolean } = {},
): Promise<TlsMismatchError | undefined> {
  if (!isTemporalUnavailable(error)) return undefined;
  const clientTls = usesTls(credentials);
  // The SDK's client wraps the gRPC error that says why ("Failed to connect to Temporal server").
  const text = [error, (error as Error).cause].map((item) => (item instanceof Error ? item.message : '')).join(' ');
  if (clientTls && answeredWithoutTls.test(text)) return new TlsMismatchError(address, clientTls, { cause: error });
  const target = handshake ? splitHostPort(address) : undefined;
  const serverTls = target && (await answersTls(target.host, target.port));
  return serverTls === !clientTls ? new TlsMismatchError(address, clientTls, { cause: error }) : undefined;
}

/**
 * Whether the server at host:port answers a TLS handshake: true when it completes (or the server ends it with a TLS
 * alert, such as a client certificate it wants), false when what answers is not TLS, undefined when nothing does.
 */
function answersTls(host: string, port: number, timeoutMs = 2_000): Promise<boolean | undefined> {
  return new Promise((resolve) => {
    // Only which protocol answers matters, not who: nothing is sent, so the certificate is not checked.
    const socket = connectTls({ host, port, rejectUnauthorized: false, ALPNProtocols: ['h2'], timeout: timeoutMs });
    const done = (answer: boolean | undefined) => {
      socket.destroy();
      resolve(answer);
    };
    socket.once('secureConnect', () => done(true));
    socket.once('timeout', () => done(undefined));
    socket.once('error', (error: NodeJS.ErrnoException) => {
      const code = error.code ?? '';
      done(code === 'ERR_SSL_WRONG_VERSION_NUMBER' ? false : code.includes('ALERT') ? true : undefined);
    });
  });
}

/** `host:port` (the host in brackets when it is an IPv6 address) split in two; undefined when it is not that form. */
export function splitHostPort(address: string): { host: string; port: number } | undefined {
  const match = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(address);
  const port = Number(match?.[2]);
  if (!match?.[1] || !Number.isInteger(port) || port <= 0 || port > 65_535) return undefined;
  return { host: match[1].replace(/^\[|\]$/g, ''), port };
}

/** True when something accepts a TCP connection at host:port within `timeoutMs`. */
export function isListening(host: string, port: number, timeoutMs = 1_000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: timeoutMs });
    const done = (listening: boolean) => {
      socket.destroy();
      resolve(listening);
    };
    socket.once('connect', () => done(true));
    socket.once('timeout', () => done(false));
    socket.once('error', () => done(false));
  });
}

interface CollectedOutput {
  tail(): string;
}

function collectOutput(child: ChildProcess, onOutput: TemporalDevServerOptions['onOutput']): CollectedOutput {
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    stdout = (stdout + chunk).slice(-outputTailBytes);
    onOutput?.(chunk, 'stdout');
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-outputTailBytes);
    onOutput?.(chunk, 'stderr');
  });
  return {
    tail: () => [stderr && `--- server stderr ---\n${stderr}`, stdout && `--- server stdout ---\n${stdout}`].join('\n'),
  };
}

async function stopProcess(child: ChildProcess, exited: Promise<unknown>, gracePeriodMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = new AbortController();
  const graceful = await Promise.race([
    exited.then(() => true),
    sleep(gracePeriodMs, false, { signal: timer.signal }).catch(() => false),
  ]);
  timer.abort();
  if (!graceful) {
    child.kill('SIGKILL');
    await exited;
  }
}

// Servers still running when this process goes away are stopped with it, so no test run or `dev`
// session leaves an orphan holding a port. (A SIGKILL of this process cannot be intercepted.)
// An in-memory server has nothing to lose and gets SIGKILL; a persistent one gets SIGTERM and
// finishes its own graceful shutdown after we are gone.
//
// The signal listeners are here because a signal nobody listens to ends the process without an 'exit' event.
// They act only when no one else listens to the signal: a process that listens itself (relay-e dev stops the API
// and lets the worker finish before it stops the server) decides when the server stops, and its 'exit' still
// stops what it left running. They are prepended, so they see the listeners before a `once` one removes itself, and
// marked, so that two copies of this module (two versions of the package in one process) do not wait for each other.
const signalHookMark = Symbol.for('relay-e.temporal-dev-server.signal-hook');
const liveServers = new Map<ChildProcess, NodeJS.Signals>();
const forwardedSignals = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT', 'SIGUSR2'] as const;

function trackUntilExit(child: ChildProcess, exited: Promise<unknown>, exitSignal: NodeJS.Signals): void {
  if (liveServers.size === 0) installExitHooks();
  liveServers.set(child, exitSignal);
  void exited.then(() => {
    liveServers.delete(child);
    if (liveServers.size === 0) removeExitHooks();
  });
}

function killLiveServers(): void {
  for (const [child, exitSignal] of liveServers) child.kill(exitSignal);
}

const onSignal = Object.assign(
  (signal: NodeJS.Signals): void => {
    // Someone else handles the signal: they stop the servers, or exit, and then the 'exit' hook does.
    if (process.listeners(signal).some((listener) => !(signalHookMark in listener))) return;
    killLiveServers();
    removeExitHooks();
    // Keep the default behaviour (exit) when nobody else handles the signal.
    if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
  },
  { [signalHookMark]: true },
);

function installExitHooks(): void {
  process.on('exit', killLiveServers);
  for (const signal of forwardedSignals) process.prependListener(signal, onSignal);
}

function removeExitHooks(): void {
  process.off('exit', killLiveServers);
  for (const signal of forwardedSignals) process.off(signal, onSignal);
}
