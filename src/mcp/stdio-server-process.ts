import { spawn } from 'node:child_process';
import type { ChildProcessByStdio } from 'node:child_process';
import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import type { Readable, Writable } from 'node:stream';
import { getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** How to start a stdio server, its secret references resolved. */
export interface StdioServerCommand {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
}

/** How long a closing server gets to exit after its stdin ends, then after SIGTERM, before the next step. */
const exitGraceMs = 2_000;

type ServerProcess = ChildProcessByStdio<Writable, Readable, Readable>;

/**
 * The client side of an MCP server over stdio, as the SDK's `StdioClientTransport`, but with the server in a process
 * group of its own (`detached`): a terminal's Ctrl-C signals its whole foreground group, which stopped the servers at
 * once, so a call in flight failed while the worker's graceful shutdown waited for it. The worker stops its servers
 * itself when it closes: stdin ended, then SIGTERM, then SIGKILL, each after a grace. A server whose worker is killed
 * sees its stdin end, as the MCP stdio transport expects servers to watch for.
 */
export class StdioServerProcess implements Transport {
  readonly #command: StdioServerCommand;
  readonly #readBuffer = new ReadBuffer();
  #process: ServerProcess | undefined;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** The server's stderr, its log: readable from the start, so no early line is lost. */
  readonly stderr = new PassThrough();

  constructor(command: StdioServerCommand) {
    this.#command = command;
  }

  /** Starts the server; a command that cannot start rejects (ENOENT, EACCES). */
  async start(): Promise<void> {
    if (this.#process) throw new Error('The MCP server process is started already');
    this.#process = this.#spawn();
    await once(this.#process, 'spawn');
  }

  #spawn(): ServerProcess {
    const { command, args, env, cwd } = this.#command;
    const child = spawn(command, args, {
      env: { ...getDefaultEnvironment(), ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
      shell: false,
      windowsHide: true,
      ...(cwd !== undefined ? { cwd } : {}),
    });
    child.on('error', (error) => this.onerror?.(error));
    child.on('close', () => {
      this.#process = undefined;
      this.onclose?.();
    });
    child.stdin.on('error', (error) => this.onerror?.(error));
    child.stdout.on('error', (error) => this.onerror?.(error));
    child.stdout.on('data', (chunk: Buffer) => this.#read(chunk));
    child.stderr.pipe(this.stderr);
    return child;
  }

  #read(chunk: Buffer): void {
    this.#readBuffer.append(chunk);
    for (;;) {
      let message: JSONRPCMessage | null;
      try {
        message = this.#readBuffer.readMessage();
      } catch (error) {
        // A line that is not a JSON-RPC message is reported and skipped, as the SDK's transport does.
        this.onerror?.(error instanceof Error ? error : new Error(String(error)));
        continue;
      }
      if (message === null) return;
      this.onmessage?.(message);
    }
  }

  async send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.#process?.stdin;
    if (!stdin) throw new Error('Not connected');
    if (!stdin.write(serializeMessage(message))) await once(stdin, 'drain');
  }

  /** Stops the server: its stdin ended, then SIGTERM, then SIGKILL, each after a grace, until it exits. */
  async close(): Promise<void> {
    const child = this.#process;
    this.#readBuffer.clear();
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'close').then(() => true);
    const graceOver = () => new Promise<false>((resolve) => setTimeout(() => resolve(false), exitGraceMs).unref());
    child.stdin.end();
    if (await Promise.race([exited, graceOver()])) return;
    child.kill('SIGTERM');
    if (await Promise.race([exited, graceOver()])) return;
    child.kill('SIGKILL');
  }
}
