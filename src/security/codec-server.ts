import { isIP, isIPv6 } from 'node:net';
import { Hono } from 'hono';
import type { Handler, MiddlewareHandler } from 'hono';
import { cors } from 'hono/cors';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { z } from 'zod';
import { HttpError, toHttpError } from '../http/http-error.js';
import { readJsonBody } from '../http/request-body.js';
import { RelayError } from '../shared/errors.js';
import { checkToolInput } from '../shared/tool-input.js';
import { payloadWorkflowId } from './aes-gcm-payload-codec.js';

export interface CodecServerOptions {
  /** The codec the endpoints run, usually `new AesGcmPayloadCodec(encryption)`. */
  codec: PayloadCodec;
  /**
   * Browser origins (the Temporal UI's) allowed to call the endpoints.
   * @default ['http://localhost:8233', 'http://127.0.0.1:8233'] (the dev server's UI)
   */
  uiOrigins?: readonly string[];
  /**
   * Host names, besides `localhost` and IP addresses, whose requests are answered (the `Host` header's name, port
   * ignored; `codec.example.com`, `[fd00::5]`), or `'any'` for every name. A web page whose own name its attacker
   * points at this server's address (DNS rebinding) is same-origin for the browser, so CORS does not stop it, but it
   * sends its own name: refused with 403 before anything is decoded. An IP address cannot be rebound. `/healthz` is
   * answered for every name: it tells only that the server runs, and probes call it by addresses of their own.
   * @default [] (localhost and IP addresses only); `'any'` when `authorize` is given, since a rebinding page has no
   * credentials to send
   */
  allowedHosts?: readonly string[] | 'any';
  /**
   * Decides from the `Authorization` header whether a request may use the codec: `false` refuses it, `true` (or
   * `{}`) lets it decrypt every payload, `{ tenantId }` only the payloads of that tenant's runs (see `tenantOfRun`).
   * Without it anyone who reaches the port can read every payload, so give one unless only trusted people reach it.
   * @default undefined (no check)
   */
  authorize?: (authorization: string | undefined) => boolean | CodecAccess | Promise<boolean | CodecAccess>;
  /**
   * The tenant of a run (`undefined` when there is no such run), for callers limited to one tenant: a payload is
   * decrypted for them only when it names a run of theirs (see `payloadWorkflowId`); any other comes back as it came,
   * still encrypted. Needed when `authorize` limits anyone to a tenant.
   */
  tenantOfRun?: (runId: string) => Promise<string | undefined>;
  /**
   * The largest request body accepted.
   * @default 4_194_304 (4 MiB: twice Temporal's payload limit)
   */
  maxBodyBytes?: number;
  /** Where unexpected errors are logged; callers see a bare 500. @default console */
  logger?: Pick<Console, 'error'>;
}

/** What a codec caller may decrypt: every payload, or (with `tenantId`) those of one tenant's runs. */
export interface CodecAccess {
  tenantId?: string;
}

/** The codec server's Hono environment: each request's access, as `authorize` decided it. */
export type CodecEnv = { Variables: { access: CodecAccess } };

/** The Temporal UI's default origin on the dev server. */
export const defaultUiOrigins = ['http://localhost:8233', 'http://127.0.0.1:8233'] as const;

// Temporal's codec server format: proto JSON payloads, metadata values and data in base64.
const base64Schema = z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, { message: 'Expected base64' });
const payloadsBodySchema = z.object({
  payloads: z.array(
    z.object({
      metadata: z.record(z.string(), base64Schema).nullish(),
      data: base64Schema.nullish(),
    }),
  ),
});

type JsonPayload = z.infer<typeof payloadsBodySchema>['payloads'][number];

/**
 * A codec server as the Temporal UI and CLI call it (`--ui-codec-endpoint`, `--codec-endpoint`): `POST /encode` and
 * `POST /decode` take and return `{ payloads: [...] }`, so people who may see a run's data read it decrypted.
 */
export function createCodecServer(options: CodecServerOptions): Hono<CodecEnv> {
  const app = new Hono<CodecEnv>();
  answerErrors(app, options.logger ?? console);
  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.use(
    '*',
    cors({
      origin: [...(options.uiOrigins ?? defaultUiOrigins)],
      allowMethods: ['POST', 'OPTIONS'],
      allowHeaders: ['Content-Type', 'X-Namespace', 'Authorization'],
      credentials: true,
      maxAge: 600,
    }),
  );
  app.use('*', checkHost(options.allowedHosts ?? (options.authorize ? 'any' : [])));
  app.use('*', checkAccess(options.authorize));
  app.use('*', readJsonBody(options.maxBodyBytes ?? 4_194_304));
  for (const operation of ['encode', 'decode'] as const) app.post(`/${operation}`, runCodec(operation, options));
  return app;
}

/** Problem responses for errors and unknown routes; an unexpected error is logged and answered as a bare 500. */
function answerErrors(app: Hono<CodecEnv>, logger: Pick<Console, 'error'>): void {
  app.onError((error, c) => {
    const httpError = toHttpError(error);
    if (httpError.status >= 500) logger.error(`Relay-E codec server: ${c.req.method} ${c.req.path} failed`, error);
    return httpError.getResponse();
  });
  app.notFound((c) =>
    new HttpError(
      404,
      'not_found',
      `No route for ${c.req.method} ${c.req.path}; use POST /encode or /decode`,
    ).getResponse(),
  );
}

/**
 * The name of a `Host` header (`name`, `name:port`, `[ipv6]:port`), lower case, without brackets or a final dot;
 * `undefined` when it is not one.
 */
export function hostNameOf(host: string): string | undefined {
  const match = /^(?:\[([0-9a-f:.]+)\]|([a-z0-9_-]+(?:\.[a-z0-9_-]+)*\.?))(?::\d{1,5})?$/i.exec(host.trim());
  const [, ipv6, name] = match ?? [];
  if (ipv6 !== undefined) return isIPv6(ipv6) ? ipv6.toLowerCase() : undefined;
  return name?.toLowerCase().replace(/\.$/, '');
}

/**
 * The name an `allowedHosts` entry gives (`codec.example.com`, `[fd00::5]` or `fd00::5`), as `hostNameOf` reads a
 * `Host` header; `undefined` for anything else, a port or a scheme included.
 */
export function allowedHostNameOf(entry: string): string | undefined {
  const text = entry.trim();
  if (isIPv6(text)) return text.toLowerCase();
  return /:\d+$|^$/.test(text) ? undefined : hostNameOf(text);
}

/** Refuses (403) a request for a name that is not `localhost`, an IP address or one of `allowedHosts`. */
function checkHost(allowedHosts: readonly string[] | 'any'): MiddlewareHandler<CodecEnv> {
  if (allowedHosts === 'any') return (_c, next) => next();
  const names = new Set(['localhost']);
  for (const entry of allowedHosts) {
    const name = allowedHostNameOf(entry);
    if (name === undefined) throw new Error(`allowedHosts: '${entry}' is not a host name (no scheme, no port)`);
    names.add(name);
  }
  return async (c, next) => {
    // Node's server builds the URL from the Host header; a request made in-process may carry none.
    const host = c.req.header('host') ?? new URL(c.req.url).host;
    const name = hostNameOf(host);
    if (name === undefined || !(names.has(name) || isIP(name) !== 0)) {
      throw new HttpError(
        403,
        'host_not_allowed',
        name === undefined
          ? 'This codec server does not answer a request whose Host header is not a host name'
          : `This codec server does not answer requests for host '${name}'; if that is its name, allow it ` +
              `(relay-e codec-server --allowed-host ${name}, or the allowedHosts option)`,
      );
    }
    await next();
  };
}

/** Refuses a request `authorize` refuses (401), and keeps what it allows as the request's access. */
function checkAccess(authorize: CodecServerOptions['authorize']): MiddlewareHandler<CodecEnv> {
  return async (c, next) => {
    const access = authorize ? await authorize(c.req.header('authorization')) : true;
    if (access === false) {
      throw new HttpError(401, 'unauthorized', 'This codec server needs an authorization header', {
        headers: { 'www-authenticate': 'Bearer' },
      });
    }
    c.set('access', access === true ? {} : access);
    await next();
  };
}

/** `POST /encode` or `/decode`: the body's payloads through the codec, decoded only as far as the access allows. */
function runCodec(operation: 'encode' | 'decode', options: CodecServerOptions): Handler<CodecEnv> {
  const { codec } = options;
  return async (c) => {
    const check = checkToolInput(payloadsBodySchema, await c.req.json());
    if (!check.success) throw new HttpError(400, 'invalid_input', check.message, { issues: check.issues });
    const payloads = check.data.payloads.map(fromJsonPayload);
    try {
      const { tenantId } = c.get('access');
      const result = await (operation === 'encode'
        ? codec.encode(payloads)
        : tenantId === undefined
          ? codec.decode(payloads)
          : decodeForTenant(codec, payloads, tenantId, options.tenantOfRun));
      return c.json({ payloads: result.map(toJsonPayload) });
    } catch (error) {
      if (RelayError.hasCode(error, 'decryption_failed')) {
        throw new HttpError(422, 'decryption_failed', error.message, { cause: error });
      }
      throw error;
    }
  };
}

/**
 * Decrypts the payloads that name a run of `tenantId` and leaves the others as they came. The run a payload names is
 * read before it is decrypted and authenticated by decrypting it: a payload whose run id was changed to one of the
 * tenant's fails with `decryption_failed` instead of decrypting.
 */
async function decodeForTenant(
  codec: PayloadCodec,
  payloads: Payload[],
  tenantId: string,
  tenantOfRun: CodecServerOptions['tenantOfRun'],
): Promise<Payload[]> {
  if (!tenantOfRun) throw new Error('A codec caller limited to a tenant needs the tenantOfRun option');
  const runIds = payloads.map(payloadWorkflowId);
  const tenants = await tenantsOfRuns(new Set(runIds.filter((runId) => runId !== undefined)), tenantOfRun);
  return Promise.all(
    payloads.map(async (payload, index) => {
      const runId = runIds[index];
      if (runId === undefined || tenants.get(runId) !== tenantId) return payload;
      const [decoded] = await codec.decode([payload]);
      return decoded ?? payload;
    }),
  );
}

/** How many runs' tenants one decode request asks Temporal for at once. */
const tenantLookupsAtOnce = 8;

/**
 * The tenant of each run, each run asked once and at most {@link tenantLookupsAtOnce} at a time: the UI sends a run's
 * payloads together (hundreds of one run), and a caller could name thousands of runs in one body, each a describe
 * call that counts against the namespace's rate limit the workers share.
 */
async function tenantsOfRuns(
  runIds: Set<string>,
  tenantOfRun: (runId: string) => Promise<string | undefined>,
): Promise<Map<string, string | undefined>> {
  const tenants = new Map<string, string | undefined>();
  const queue = [...runIds];
  const lookUpNext = async (): Promise<void> => {
    for (let runId = queue.shift(); runId !== undefined; runId = queue.shift()) {
      tenants.set(runId, await tenantOfRun(runId));
    }
  };
  await Promise.all(Array.from({ length: Math.min(tenantLookupsAtOnce, queue.length) }, lookUpNext));
  return tenants;
}

function fromJsonPayload(payload: JsonPayload): Payload {
  return {
    metadata: Object.fromEntries(
      Object.entries(payload.metadata ?? {}).map(([key, value]) => [key, Buffer.from(value, 'base64')]),
    ),
    ...(payload.data ? { data: Buffer.from(payload.data, 'base64') } : {}),
  };
}

function toJsonPayload(payload: Payload): { metadata: Record<string, string>; data?: string } {
  return {
    metadata: Object.fromEntries(
      Object.entries(payload.metadata ?? {}).map(([key, value]) => [key, Buffer.from(value).toString('base64')]),
    ),
    ...(payload.data ? { data: Buffer.from(payload.data).toString('base64') } : {}),
  };
}
