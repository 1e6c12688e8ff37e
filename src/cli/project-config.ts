import { access } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { RelayConfig } from '../config/define-config.js';
import { usageError } from './cli-error.js';

/** The names a project's config file may have, in the order they are looked for at the project root. */
export const configFileNames = ['relay-e.config.ts', 'relay-e.config.mts', 'relay-e.config.js', 'relay-e.config.mjs'];

/** The `--config` flag of the commands that read the project's config file. */
export const configOption = { config: { type: 'string' } } as const;

/** The help line of {@link configOption}. */
export const configOptionHelp = `  --config FILE          the project's config (default: relay-e.config.ts, .mts, .js or .mjs here)`;

/** A project's config and the file it came from. */
export interface ProjectConfig {
  file: string;
  config: RelayConfig;
}

/**
 * Loads `--config FILE`, else the first of {@link configFileNames} in `directory`; `undefined` when there is none.
 * TypeScript configs load through tsx's `tsImport`, without a build step.
 */
export async function loadProjectConfig(
  flag: string | undefined,
  directory: string = process.cwd(),
): Promise<ProjectConfig | undefined> {
  const file = flag !== undefined ? path.resolve(directory, flag) : await findConfigFile(directory);
  if (file === undefined) return undefined;
  if (!(await exists(file))) throw usageError(`Config file ${file} does not exist`);
  let module: { default?: unknown };
  try {
    module = (await importConfigModule(file)) as { default?: unknown };
  } catch (error) {
    throw usageError(`Cannot load ${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
  return { file, config: checkConfig(unwrapDefault(module.default), file) };
}

/** A TypeScript config outside an ES-module package loads as CommonJS, its default export one level down. */
function unwrapDefault(exported: unknown): unknown {
  const nested = (exported as { default?: unknown } | undefined)?.default;
  return nested !== undefined && !(typeof exported === 'object' && exported !== null && 'tools' in exported)
    ? nested
    : exported;
}

async function findConfigFile(directory: string): Promise<string | undefined> {
  for (const name of configFileNames) {
    const file = path.join(directory, name);
    if (await exists(file)) return file;
  }
  return undefined;
}

/**
 * tsx rather than Node's own type stripping: it works on the Node 22 floor without a flag, follows the `./tools.js`
 * specifiers TypeScript projects write for `./tools.ts`, reads the project's tsconfig `paths`, and handles enums
 * and parameter properties; `tsImport` scopes it to the config's own imports instead of hooking the whole process.
 */
async function importConfigModule(file: string): Promise<unknown> {
  const url = pathToFileURL(file).href;
  if (!/\.m?ts$/.test(file)) return import(url);
  const { tsImport } = await import('tsx/esm/api');
  return tsImport(url, import.meta.url);
}

function checkConfig(value: unknown, file: string): RelayConfig {
  if (typeof value !== 'object' || value === null) {
    throw usageError(`${file} must export its config as default: export default defineConfig({ tools: [...] })`);
  }
  const config = value as Partial<RelayConfig>;
  if (!Array.isArray(config.tools)) throw usageError(`${file}: 'tools' must be a list of tools (defineTool(...))`);
  for (const [index, tool] of config.tools.entries()) {
    const name = (tool as { name?: unknown } | undefined)?.name;
    const isTool = typeof name === 'string' && typeof (tool as { execute?: unknown }).execute === 'function';
    if (!isTool && (tool as { kind?: unknown } | undefined)?.kind !== 'tool-source') {
      throw usageError(`${file}: tools[${index}] is not a tool; define it with defineTool(...) or mcpTools(...)`);
    }
  }
  if (config.models !== undefined && (typeof config.models !== 'object' || config.models === null)) {
    throw usageError(`${file}: 'models' must map provider prefixes to model providers`);
  }
  refuseUnknownFields(config, file);
  for (const [field, check] of Object.entries(fieldChecks)) {
    const problem =
      config[field as keyof RelayConfig] === undefined ? undefined : check(config[field as keyof RelayConfig]);
    if (problem !== undefined) throw usageError(`${file}: '${field}' ${problem}`);
  }
  return config as RelayConfig;
}

/**
 * What each optional field must be, as a problem to report or `undefined`: a `.ts` config is loaded without type
 * checking, so a wrong value would otherwise surface later, far from the field (or never, when a default stands in).
 */
const fieldChecks: Record<string, (value: unknown) => string | undefined> = {
  executor: (value) => (isObject(value) ? undefined : 'must be an object of executor options'),
  secrets: (value) =>
    isObject(value) || typeof value === 'function' ? undefined : 'must map secret names to values, or be a resolver',
  taskQueue: (value) => (typeof value === 'string' && value.trim() !== '' ? undefined : 'must be a non-empty string'),
  encryption: (value) => (isObject(value) ? undefined : 'must be { keys, currentKeyId? }'),
  payloadStore: (value) => {
    const kind = isObject(value) ? value['kind'] : undefined;
    return kind === 'memory' || kind === 'file' || kind === 'postgres'
      ? undefined
      : `must be { kind: 'memory' | 'file' | 'postgres', … }, not kind ${JSON.stringify(kind)}`;
  },
  approvalWebhook: (value) =>
    isObject(value) || typeof value === 'function' ? undefined : 'must be a webhook, or a function of the tenant',
  remindApproversBeforeExpiry: durationProblem,
  modelCallStartTimeout: durationProblem,
};

/** The fields `defineConfig` takes: another one is a misspelling (`taskqueue`), which would otherwise be ignored. */
const knownFields = new Set(['tools', 'models', ...Object.keys(fieldChecks)]);

function refuseUnknownFields(config: object, file: string): void {
  const unknown = Object.keys(config).filter((field) => !knownFields.has(field));
  if (unknown.length === 0) return;
  const known = [...knownFields].join(', ');
  throw usageError(`${file}: unknown field${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')} (known: ${known})`);
}

function durationProblem(value: unknown): string | undefined {
  return typeof value === 'string' || typeof value === 'number'
    ? undefined
    : "must be a duration ('30s') or milliseconds";
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

async function exists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}
