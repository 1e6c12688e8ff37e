import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { McpStdioTransport } from '../../src/mcp/mcp-tools.js';
import { createLogger } from '../../src/tool/tool-context.js';

const fixtureDirectory = join(import.meta.dirname, '../fixtures/mcp');

/** Keeps the MCP layer's own logs (reconnects, server stderr) out of the test output unless asked for. */
export const quietLogger = createLogger({ level: process.env.RELAY_E_LOG_LEVEL === 'debug' ? 'debug' : 'silent' });

/** How to start the fixture MCP server as a child process over stdio. */
export function fixtureStdioTransport(env: Record<string, string> = {}): McpStdioTransport {
  return {
    type: 'stdio',
    command: process.execPath,
    args: ['--import', 'tsx', join(fixtureDirectory, 'stdio-server.ts')],
    env,
  };
}

/** How to start the faulty MCP server (test/fixtures/mcp/faulty-server.ts) with one of its faults. */
export function faultyStdioTransport(
  fault: 'repeated-cursor' | 'endless-pages' | 'unreadable-schema' | 'null-default' | 'backtracking-pattern',
): McpStdioTransport {
  return {
    type: 'stdio',
    command: process.execPath,
    args: ['--import', 'tsx', join(fixtureDirectory, 'faulty-server.ts')],
    env: { FAULT: fault },
  };
}

/** A fresh temporary folder. */
export function temporaryFolder(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `relay-e-${prefix}-`));
}

/** The JSON lines the fixture server appended to its events file. */
export function readServerEvents(file: string): Array<Record<string, unknown>> {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** `promise`, or a rejection naming `what` when it has not settled after `timeoutMs` (instead of a hung test). */
export function settledWithin<T>(what: string, promise: Promise<T>, timeoutMs = 20_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} had not settled after ${timeoutMs} ms`)), timeoutMs);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** Polls `predicate` until it holds; fails with `what` after `timeoutMs`. */
export async function eventually(what: string, predicate: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The path of an executable installed by the project's own package.json, for servers no one here wrote. */
export function installedBin(name: string): string {
  const path = join(import.meta.dirname, '../../node_modules/.bin', name);
  if (!existsSync(path)) throw new Error(`${name} is not installed: run npm ci (it is a devDependency)`);
  return path;
}
