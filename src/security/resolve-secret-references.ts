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
  context: { tenantId: string; toolName: string },
): Promise<ResolvedConfig> {
  const values: string[] = [];
  const resolve = async (value: unknown): Promise<unknown> => {
    if (isSecretReference(value)) {
      const secret = await lookUp(secrets, value.$secret, context);
      if (secret === undefined) {
        throw new RelayError(
          'invalid_input',
          `The run's config refers to secret '${value.$secret}', which this worker does not know`,
        );
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
 * in JSON text held in a string (a cut output's, or a body a tool passes on).
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

/** Each secret as written and as JSON escapes it (`\n`, `\"`), longest first so one containing another goes whole. */
function secretForms(secrets: readonly string[]): string[] {
  const forms = secrets.flatMap((secret) => [secret, JSON.stringify(secret).slice(1, -1)]);
  return [...new Set(forms)].filter((form) => form !== '').sort((a, b) => b.length - a.length);
}

/** The length of the longest start of `secret` that `text` ends with; 0 for none. */
function endingStartLength(text: string, secret: string): number {
  for (let length = Math.min(secret.length, text.length); length > 0; length -= 1) {
    if (text.endsWith(secret.slice(0, length))) return length;
  }
  return 0;
}

/** Resolves secret `NAME` to the environment variable `RELAY_E_SECRET_NAME` (what the CLI's worker uses). */
export function secretsFromEnv(env: NodeJS.ProcessEnv = process.env): SecretResolver {
  return (name) => (/^\w{1,128}$/.test(name) ? env[`RELAY_E_SECRET_${name}`] : undefined);
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
