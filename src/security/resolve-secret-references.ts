import { RelayError } from '../shared/errors.js';

/** Where a tool call's secret comes from; undefined means the worker does not know that secret. */
export type SecretResolver = (
  name: string,
  context: { tenantId: string; toolName: string },
) => string | undefined | Promise<string | undefined>;

/** A worker's secrets: a fixed map (`{ BANK_API_TOKEN: '…' }`) or a resolver (a vault, per-tenant lookups). */
export type SecretSource = Readonly<Record<string, string>> | SecretResolver;

/** A run's config refers to a secret as `{ "$secret": "NAME" }`; history keeps this reference, never the value. */
export interface SecretReference {
  $secret: string;
}

/** The config a tool sees, with the secret values it holds so they can be kept out of the tool's result. */
export interface ResolvedConfig {
  config: Record<string, unknown>;
  values: string[];
}

/** True for a `{ "$secret": "NAME" }` object, the only shape that names a secret. */
export function isSecretReference(value: unknown): value is SecretReference {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    Object.keys(value).length === 1 &&
    typeof (value as { $secret?: unknown }).$secret === 'string'
  );
}

/**
 * Replaces every `{ "$secret": "NAME" }` in a run's config, however deep, by the secret's value. It runs inside the
 * tool activity, so the values reach the tool and nothing else: not the workflow input, history or run events.
 */
export async function resolveSecretReferences(
  config: Record<string, unknown>,
  secrets: SecretSource | undefined,
  context: SecretLookup,
): Promise<ResolvedConfig> {
  const values: string[] = [];
  const resolve = async (value: unknown): Promise<unknown> => {
    if (isSecretReference(value)) {
      const secret = await lookUp(secrets, value.$secret, { tenantId: context.tenantId, toolName: context.toolName });
      if (secret === undefined) {
        throw new RelayError('invalid_input', describeUnknownSecret(value.$secret, secrets, context));
      }
      values.push(secret);
      return secret;
    }
    if (Array.isArray(value)) return Promise.all(value.map(resolve));
    if (typeof value === 'object' && value !== null) {
      const entries = await Promise.all(Object.entries(value).map(async ([key, item]) => [key, await resolve(item)]));
      return Object.fromEntries(entries) as Record<string, unknown>;
    }
    return value;
  };
  return { config: (await resolve(config)) as Record<string, unknown>, values };
}

/**
 * Replaces each secret value inside every string of `value` with `[secret]`, so a tool that echoes its token (in its
 * output or an error message) does not write it into history. A secret is also found as JSON escapes it, as it shows
 * in JSON text held in a string (a cut output's, or a body a tool passes on), and, from 12 bytes, base64-encoded (an
 * echoed `Authorization: Basic` header).
 */
export function redactSecrets<T>(value: T, secrets: readonly string[]): T {
  const needles = secretForms(secrets);
  if (needles.length === 0 || value === undefined) return value;
  const redact = (item: unknown): unknown => {
    if (typeof item === 'string') return needles.reduce((text, needle) => text.replaceAll(needle, '[secret]'), item);
    if (Array.isArray(item)) return item.map(redact);
    if (typeof item === 'object' && item !== null) {
      return Object.fromEntries(Object.entries(item).map(([key, entry]) => [redact(key), redact(entry)]));
    }
    return item;
  };
  // Walk what history would store (the JSON), so class instances and toJSON results are covered the same way.
  return redact(JSON.parse(JSON.stringify(value))) as T;
}

/**
 * `text` without the start of a secret (as written or JSON-escaped) it ends with: what is left of a secret that a
 * size limit cut in two, which `redactSecrets` no longer matches. It is dropped rather than marked, so a text cut to
 * fit a limit grows no longer.
 */
export function withoutCutSecret(text: string, secrets: readonly string[]): string {
  const cut = Math.max(0, ...secretForms(secrets).map((form) => endingStartLength(text, form)));
  return text.slice(0, text.length - cut);
}

/**
 * Each secret as written, as JSON escapes it (`\n`, `\"`) and, when long enough to be told from chance, in base64
 * and base64url; longest first so one containing another goes whole.
 */
function secretForms(secrets: readonly string[]): string[] {
  const forms = secrets.flatMap((secret) => [secret, JSON.stringify(secret).slice(1, -1), ...base64Forms(secret)]);
  return [...new Set(forms)].filter((form) => form !== '').sort((a, b) => b.length - a.length);
}

/** How long a secret must be for its base64 forms to be looked for: shorter ones would match other text by chance. */
const minBase64SecretBytes = 12;

/**
 * The characters of `secret`'s base64 (and base64url) that its bytes alone decide, for each of the three places it
 * can start at within encoded text: so it is found inside a longer encoding too, such as an `Authorization: Basic`
 * header's `user:secret`. A character that mixes in a neighbouring byte is left, which tells nothing of the secret.
 */
function base64Forms(secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8');
  if (bytes.length < minBase64SecretBytes) return [];
  return [0, 1, 2].flatMap((shift) => {
    const encoded = Buffer.concat([Buffer.alloc(shift), bytes]).toString('base64');
    // Character i holds bits 6i to 6i + 6: those wholly inside the secret's bits are its own.
    const own = encoded.slice(Math.ceil((shift * 8) / 6), Math.floor(((shift + bytes.length) * 8) / 6));
    return [own, own.replaceAll('+', '-').replaceAll('/', '_')];
  });
}

/** The length of the longest start of `secret` that `text` ends with; 0 for none. */
function endingStartLength(text: string, secret: string): number {
  for (let length = Math.min(secret.length, text.length); length > 0; length -= 1) {
    if (text.endsWith(secret.slice(0, length))) return length;
  }
  return 0;
}

/** The prefix of the environment variables {@link secretsFromEnv} reads: secret `NAME` is `RELAY_E_SECRET_NAME`. */
const secretEnvPrefix = 'RELAY_E_SECRET_';

/** The secret names {@link secretsFromEnv} can read: what an environment variable's name may hold. */
const envSecretName = /^\w{1,128}$/;

/** The resolvers {@link secretsFromEnv} made, so a secret they lack is explained with the variable to set. */
const fromEnv = new WeakSet<SecretResolver>();

/** Resolves secret `NAME` to the environment variable `RELAY_E_SECRET_NAME` (what the CLI's worker uses). */
export function secretsFromEnv(env: NodeJS.ProcessEnv = process.env): SecretResolver {
  const resolver: SecretResolver = (name) => (envSecretName.test(name) ? env[`${secretEnvPrefix}${name}`] : undefined);
  fromEnv.add(resolver);
  return resolver;
}

/**
 * Whose secrets are resolved: the tenant and the tool they are asked for (what a resolver is given), and the MCP
 * server when they are in its settings rather than in a run's config. The connection that lists a server's tools
 * asks under the tool name `<server>/*`, which no tool's name can be.
 */
export interface SecretLookup {
  tenantId: string;
  toolName: string;
  mcpServer?: string;
}

/**
 * Why a secret could not be resolved, and how to give it: the MCP server whose settings need it (at worker start, no
 * run exists), or the run's config that refers to it, with the tool and tenant it was asked for and where this
 * worker's secrets come from (for {@link secretsFromEnv}, the environment variable to set).
 */
function describeUnknownSecret(name: string, secrets: SecretSource | undefined, lookup: SecretLookup): string {
  const { tenantId, toolName, mcpServer } = lookup;
  const forTool = toolName === `${mcpServer}/*` ? 'on the connection that lists its tools' : `for tool '${toolName}'`;
  const what =
    mcpServer !== undefined
      ? `MCP server '${mcpServer}' needs secret '${name}' in its settings for tenant '${tenantId}' (${forTool}), and this worker does not know it`
      : `The run's config refers to secret '${name}', which this worker does not know (tool '${toolName}', tenant '${tenantId}')`;
  return `${what}: ${howToGiveSecret(name, secrets)}`;
}

/** What gives this worker the secret, by where its secrets come from. */
function howToGiveSecret(name: string, secrets: SecretSource | undefined): string {
  if (secrets === undefined) return 'the worker was given no `secrets`';
  if (typeof secrets !== 'function') return `add '${name}' to the worker's \`secrets\``;
  if (!fromEnv.has(secrets)) return "the worker's `secrets` resolver returned nothing for it";
  if (!envSecretName.test(name)) {
    return `secretsFromEnv() reads only names of letters, digits and _ (at most 128), so give it through the worker's \`secrets\` instead`;
  }
  return `set the environment variable ${secretEnvPrefix}${name} (secretsFromEnv() reads it), or give the worker \`secrets\` that have it`;
}

async function lookUp(
  secrets: SecretSource | undefined,
  name: string,
  context: { tenantId: string; toolName: string },
): Promise<string | undefined> {
  if (secrets === undefined) return undefined;
  if (typeof secrets === 'function') return secrets(name, context);
  return Object.hasOwn(secrets, name) ? secrets[name] : undefined;
}
