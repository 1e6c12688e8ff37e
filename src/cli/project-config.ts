import { access } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { RelayConfig } from '../config/define-config.js';
import type { ModelProvider } from '../model/model-provider.js';
import { toEncryptionKeyRing } from '../security/encryption-keys.js';
import { toRetentionMs } from '../store/payload-retention.js';
import { durationOptionMs } from '../shared/duration-option.js';
import { errorMessage } from '../shared/error-message.js';
import { usageError } from './cli-error.js';

/** The names a project's config file may have, in the order they are looked for at the project root. */
const configFileNames = ['relay-e.config.ts', 'relay-e.config.mts', 'relay-e.config.js', 'relay-e.config.mjs'];

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
    throw usageError(`Cannot load ${file}: ${errorMessage(error)}`);
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
  if (!isObject(value)) {
    throw usageError(`${file} must export its config as default: export default defineConfig({ tools: [...] })`);
  }
  const problem = fieldsProblem(value, '', configFields);
  if (problem !== undefined) throw usageError(`${file}: ${problem}`);
  return value as unknown as RelayConfig;
}

/**
 * What is wrong with the value at `path` (`payloadStore.directory`), naming the path, or `undefined`: a `.ts` config
 * is loaded without type checking, so a wrong value would otherwise surface later, far from the field (or never,
 * when a default stands in).
 */
type Check = (value: unknown, path: string) => string | undefined;

/** A check that `isValid(value)`, else says what the value at the path must be. */
function rule(isValid: (value: unknown) => boolean, mustBe: string): Check {
  return (value, path) => (isValid(value) ? undefined : `'${path}' ${mustBe}`);
}

/** `check`, for a field that may be left out. */
function optional(check: Check): Check {
  return (value, path) => (value === undefined ? undefined : check(value, path));
}

/** A check by the code that will take the value, which throws on a bad one: its own rule, run before connecting. */
function checkedBy(take: (value: never) => unknown): Check {
  return (value, path) => {
    try {
      take(value as never);
      return undefined;
    } catch (error) {
      return `'${path}': ${errorMessage(error)}`;
    }
  };
}

/** A check of an object with these fields and no others: another is a misspelling, which would go unread. */
function objectOf(fields: Record<string, Check>, mustBe: string): Check {
  return (value, path) => (isObject(value) ? fieldsProblem(value, path, fields) : `'${path}' ${mustBe}`);
}

function fieldsProblem(
  value: Record<string, unknown>,
  path: string,
  fields: Record<string, Check>,
): string | undefined {
  const unknown = Object.keys(value).filter((field) => !Object.hasOwn(fields, field));
  if (unknown.length > 0) {
    const known = Object.keys(fields).join(', ');
    const plural = unknown.length > 1 ? 's' : '';
    return `${path === '' ? '' : `'${path}' has `}unknown field${plural} ${unknown.join(', ')} (known: ${known})`;
  }
  return Object.entries(fields)
    .map(([field, check]) => check(value[field], path === '' ? field : `${path}.${field}`))
    .find((problem) => problem !== undefined);
}

const nonEmptyText = rule((value) => typeof value === 'string' && value.trim() !== '', 'must be a non-empty string');
/** A duration as the worker will read it: `'an hour'` would otherwise load and stop the worker at its start. */
const duration: Check = (value, path) => {
  if (typeof value !== 'string' && typeof value !== 'number') {
    return `'${path}' must be a duration ('30s') or milliseconds`;
  }
  try {
    durationOptionMs(value, `'${path}'`, '30s');
    return undefined;
  } catch (error) {
    return errorMessage(error);
  }
};

/** A duration, or `false` for none (the payload janitor's interval). */
const durationOrOff: Check = (value, path) => {
  if (value === false) return undefined;
  if (typeof value !== 'string' && typeof value !== 'number') {
    return `'${path}' must be a duration ('30m'), milliseconds, or false for none`;
  }
  return duration(value, path);
};

const tools: Check = (value, path) => {
  if (!Array.isArray(value)) return `'${path}' must be a list of tools (defineTool(...))`;
  const index = value.findIndex((tool) => !isToolEntry(tool));
  return index === -1 ? undefined : `${path}[${index}] is not a tool; define it with defineTool(...) or mcpTools(...)`;
};

function isToolEntry(tool: unknown): boolean {
  if (!isObject(tool)) return false;
  return (typeof tool['name'] === 'string' && typeof tool['execute'] === 'function') || tool['kind'] === 'tool-source';
}

/** A factory passed uncalled (`openaiProvider`) would load, and every model call through it fail much later. */
const modelProvider: Check = (provider, path) => {
  if (typeof (provider as Partial<ModelProvider> | null | undefined)?.generate === 'function') return undefined;
  return typeof provider === 'function'
    ? `'${path}' is a function, not a model provider; call the factory: ${provider.name || 'factory'}(...)`
    : `'${path}' must be a model provider (an object with generate())`;
};

const models: Check = (value, path) =>
  isObject(value)
    ? Object.entries(value)
        .map(([prefix, provider]) => modelProvider(provider, `${path}.${prefix}`))
        .find((problem) => problem !== undefined)
    : `'${path}' must map provider prefixes to model providers`;

const encryptionFields = objectOf(
  {
    keys: rule(isKeyMap, 'must map key ids to AES-256 keys (32 bytes, raw or base64)'),
    currentKeyId: optional(nonEmptyText),
  },
  'must be { keys, currentKeyId? }',
);

const encryptionKeyRing = checkedBy(toEncryptionKeyRing);

/** `EncryptionOptions`, its keys then checked as every codec and store will check them. */
const encryption: Check = (value, path) => encryptionFields(value, path) ?? encryptionKeyRing(value, path);

function isKeyMap(value: unknown): boolean {
  return isObject(value) && Object.values(value).every((key) => typeof key === 'string' || key instanceof Uint8Array);
}

/** Each kind's own fields (`PayloadStoreConfig`): without them a store falls back to local defaults, or fails late. */
const payloadStoreKinds = new Map<unknown, Record<string, Check>>([
  ['memory', { maxBytes: optional(rule(isPositiveInteger, 'must be a positive whole number of bytes')) }],
  ['file', { directory: nonEmptyText }],
  [
    'postgres',
    {
      connectionString: nonEmptyText,
      tableName: optional(nonEmptyText),
      connectTimeoutMs: optional(rule(isPositiveInteger, 'must be a positive whole number of ms')),
    },
  ],
]);

const payloadStore: Check = (value, path) => {
  const kind = isObject(value) ? value['kind'] : undefined;
  const kindFields = payloadStoreKinds.get(kind);
  if (!isObject(value) || kindFields === undefined) {
    return `'${path}' must be { kind: 'memory' | 'file' | 'postgres', … }, not kind ${JSON.stringify(kind)}`;
  }
  return fieldsProblem(value, path, {
    kind: () => undefined, // checked above
    ...kindFields,
    encryption: optional(encryption),
    retentionMs: optional(checkedBy(toRetentionMs)),
  });
};

/** The fields `defineConfig` takes, each with its check, in the order the checks run. */
const configFields: Record<keyof RelayConfig, Check> = {
  tools,
  models: optional(models),
  executor: optional(rule(isObject, 'must be an object of executor options')),
  secrets: optional(rule(isObjectOrFunction, 'must map secret names to values, or be a resolver')),
  taskQueue: optional(nonEmptyText),
  encryption: optional(encryption),
  payloadStore: optional(payloadStore),
  approvalWebhook: optional(rule(isObjectOrFunction, 'must be a webhook, or a function of the tenant')),
  remindApproversBeforeExpiry: optional(duration),
  modelCallStartTimeout: optional(duration),
  shutdownGraceTime: optional(duration),
  payloadJanitorInterval: optional(durationOrOff),
};

function isObjectOrFunction(value: unknown): boolean {
  return isObject(value) || typeof value === 'function';
}

function isPositiveInteger(value: unknown): boolean {
  return Number.isSafeInteger(value) && (value as number) > 0;
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
