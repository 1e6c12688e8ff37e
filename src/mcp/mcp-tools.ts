import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { isSecretReference, redactSecrets, resolveSecretReferences } from '../security/resolve-secret-references.js';
import type { SecretLookup, SecretReference, SecretSource } from '../security/resolve-secret-references.js';
import { RelayError } from '../shared/errors.js';
import type { ToolAnnotations } from '../shared/tool-catalog.js';
import { checkToolPolicy, defineJsonSchemaTool } from '../tool/define-tool.js';
import { judgePatternsAhead } from '../tool/pattern-risks.js';
import type { ToolDefinition } from '../tool/define-tool.js';
import { errorMessage } from '../shared/error-message.js';
import type { Logger, ToolContext } from '../tool/tool-context.js';
import type { LeftOutTool, OpenToolSource, ToolSource, ToolSourceContext } from '../tool/tool-source.js';
import { callMcpTool } from './call-mcp-tool.js';
import { hideSecretsInError } from '../security/hide-secrets-in-error.js';
import { McpConnection } from './mcp-connection.js';
import type { ResolvedSettings, ResolvedTransport } from './mcp-connection.js';
import { mapToolNames } from './mcp-tool-name.js';
import { TenantConnectionPool } from './tenant-connection-pool.js';
import { resolveToolPolicy } from './mcp-tool-policy.js';
import type { McpToolPolicy, ResolvedToolPolicy } from './mcp-tool-policy.js';

/** A value in a server's settings: plain text, or `{ "$secret": "NAME" }` resolved per call with the run's tenant. */
export type McpSettingValue = string | SecretReference;

/** An MCP server the worker starts as a child process and talks to over stdin and stdout. */
export interface McpStdioTransport {
  type: 'stdio';
  command: string;
  args?: string[];
  /** Added to a minimal inherited environment (PATH, HOME, …); values may be secret references. */
  env?: Record<string, McpSettingValue>;
  cwd?: string;
}

/** An MCP server reached over Streamable HTTP. */
export interface McpHttpTransport {
  type: 'http';
  url: string;
  /** Sent with every request; values may be secret references (`Authorization: { $secret: 'GITHUB_TOKEN' }`). */
  headers?: Record<string, McpSettingValue>;
}

/** What `mcpTools` takes: the server, how to reach it, and how its tools are approved, timed and retried. */
export interface McpToolsOptions extends McpToolPolicy {
  /** Names the server in tool names, catalogs, events and errors: 1 to 32 letters, digits, `_` or `-`. */
  name: string;
  transport: McpStdioTransport | McpHttpTransport;
  /**
   * Put before each tool's name, with `_`, so tools of different servers cannot clash; `''` for none.
   * @default the server's `name`
   */
  prefix?: string;
  /** Policies per tool, keyed by the tool's own name on the server or a glob pattern (`delete_*`). */
  tools?: Record<string, McpToolPolicy>;
  /**
   * The tenant whose secrets open the connection that lists the tools at start and on change.
   * @default 'default'
   */
  catalogTenantId?: string;
  /**
   * For a server whose settings hold secrets (one connection per tenant): how many tenants' connections stay open
   * at once; beyond it the least recently used idle one is closed.
   * @default 16
   */
  maxTenantConnections?: number;
  /**
   * For a server whose settings hold secrets: a tenant's connection is closed after this long without a call.
   * @default 300_000 (5 minutes)
   */
  tenantConnectionIdleMs?: number;
}

const defaultMaxTenantConnections = 16;
const defaultTenantConnectionIdleMs = 5 * 60_000;

const serverNamePattern = /^[a-zA-Z0-9_-]{1,32}$/;
const prefixPattern = /^[a-zA-Z0-9_-]{0,32}$/;

/**
 * A tool source for one MCP server, accepted wherever tools are (`createWorker({ tools: [myTool, mcpTools(…)] })`).
 * The worker lists the server's tools at start and again when it announces a change; each call runs in the run's
 * tool activity. Bad options throw `RelayError('invalid_tool_definition')` here, not at worker start; only rules
 * that are sound alone but clash once combined for one of the server's tools fail the start, naming the tool.
 */
export function mcpTools(options: McpToolsOptions): ToolSource {
  checkOptions(options);
  // Policies are fixed here, so a tool that appears later can only ask for a reminder one of them already sets.
  const remindsApprovers = [options, ...Object.values(options.tools ?? {})].some(
    (policy) => policy.remindApproversBeforeExpiryMs !== undefined,
  );
  return {
    kind: 'tool-source',
    name: options.name,
    ...(remindsApprovers ? { remindsApprovers } : {}),
    open: (context) => openMcpSource(options, context),
  };
}

function checkOptions(options: McpToolsOptions): void {
  const { name, transport } = options;
  if (typeof name !== 'string' || !serverNamePattern.test(name)) {
    invalid(`MCP server name ${JSON.stringify(name)} must be 1 to 32 letters, digits, '_' or '-'`);
  }
  if (options.prefix !== undefined && !prefixPattern.test(options.prefix)) {
    invalid(
      `MCP server '${name}': prefix ${JSON.stringify(options.prefix)} must be up to 32 letters, digits, '_' or '-'`,
    );
  }
  if (transport?.type === 'stdio') {
    if (typeof transport.command !== 'string' || transport.command === '')
      invalid(`MCP server '${name}' needs a command`);
    checkSettingValues(name, 'env', transport.env);
  } else if (transport?.type === 'http') {
    if (!URL.canParse(transport.url) || !/^https?:$/.test(new URL(transport.url).protocol)) {
      invalid(`MCP server '${name}': url ${JSON.stringify(transport.url)} is not an http(s) URL`);
    }
    checkSettingValues(name, 'headers', transport.headers);
  } else {
    invalid(`MCP server '${name}': transport.type must be 'stdio' or 'http'`);
  }
  for (const field of ['maxTenantConnections', 'tenantConnectionIdleMs'] as const) {
    const value = options[field];
    if (value !== undefined && !(Number.isInteger(value) && value > 0)) {
      invalid(`MCP server '${name}': ${field} must be a positive integer, got ${JSON.stringify(value)}`);
    }
  }
  checkPolicies(options);
}

/** The server's policy and each rule under `tools`, so a mistake throws here rather than drop tools at start. */
function checkPolicies(options: McpToolsOptions): void {
  const { name, tools } = options;
  checkPolicy(name, '', options);
  if (tools !== undefined && (typeof tools !== 'object' || tools === null)) {
    invalid(`MCP server '${name}': tools must be an object of policies keyed by tool name or pattern`);
  }
  for (const [key, policy] of Object.entries(tools ?? {})) checkPolicy(name, `, tools['${key}']`, policy);
}

/**
 * Checks a policy with the rules `defineTool` applies to a tool's options; a bad one throws naming the server and
 * `where`. Its approval options are checked as for a tool that asks for approval: beside `requiresApproval: false`
 * they still reach the tools of other rules that ask.
 */
function checkPolicy(server: string, where: string, policy: McpToolPolicy): void {
  if (typeof policy !== 'object' || policy === null) {
    invalid(`MCP server '${server}'${where}: a policy must be an object`);
  }
  const { requiresApproval } = policy;
  const asking = requiresApproval === false || requiresApproval === undefined ? true : requiresApproval;
  const asAsking = { ...policy, requiresApproval: asking };
  checkToolPolicy(asAsking, (message) => invalid(`MCP server '${server}'${where}: ${message}`));
}

function checkSettingValues(server: string, field: string, values: Record<string, unknown> | undefined): void {
  for (const [key, value] of Object.entries(values ?? {})) {
    if (typeof value !== 'string' && !isSecretReference(value)) {
      invalid(`MCP server '${server}': ${field}.${key} must be a string or { "$secret": "NAME" }`);
    }
  }
}

function invalid(message: string): never {
  throw new RelayError('invalid_tool_definition', message);
}

/** The server's tools, kept current, and its connections: one for the catalog, one per tenant with own secrets. */
async function openMcpSource(options: McpToolsOptions, context: ToolSourceContext): Promise<OpenToolSource> {
  const { name: server, transport } = options;
  const { logger } = context;
  const usesSecrets = holdsSecretReferences(transport);
  const catalogTenantId = options.catalogTenantId ?? 'default';
  const settingsFor = settingsResolver(options, context.secrets);
  // A server that restarted, or announced a change, may serve other tools: the catalog lists them again.
  const refresh = coalescedRefresh(
    async () => {
      const { tools, leftOut } = await listTools();
      context.onToolsChanged(tools, leftOut);
    },
    (error) => logger.error('Could not refresh the tools of an MCP server', { server, error }),
  );
  const pool = new TenantConnectionPool(server, logger, {
    maxConnections: options.maxTenantConnections ?? defaultMaxTenantConnections,
    idleMs: options.tenantConnectionIdleMs ?? defaultTenantConnectionIdleMs,
    onSessionLost: refresh,
  });
  const catalog = new McpConnection({
    server,
    ...(usesSecrets ? { tenantId: catalogTenantId } : {}),
    // Resolved on each reconnect too: after a rotation, the current secret rather than the one the worker started with.
    settings: () => settingsFor(catalogTenantId, `${server}/*`),
    logger,
    onToolsChanged: refresh,
    onSessionLost: refresh,
  });
  const onConnection = connectionUser(catalog, usesSecrets ? { pool, settingsFor } : undefined);
  const listTools = async () => {
    const listed = await catalog.listTools();
    // Defining the tools then finds their patterns judged: a relisting does not stop the worker while recheck works.
    await judgePatternsAhead(listed.map((tool) => tool.inputSchema));
    return toToolDefinitions(options, listed, logger, onConnection);
  };
  try {
    const { tools, leftOut } = await listTools();
    return {
      tools,
      leftOut,
      close: async () => {
        await Promise.all([catalog.close(), pool.close()]);
      },
    };
  } catch (error) {
    await catalog.close();
    throw error;
  }
}

/**
 * A refresh that runs one at a time, and once for every request made before it starts: a restart makes each tenant's
 * connection ask at once. A refresh that fails goes to `failed`; the next request tries again.
 */
function coalescedRefresh(refresh: () => Promise<void>, failed: (error: unknown) => void): () => void {
  let refreshing = Promise.resolve();
  let queued = false;
  return () => {
    if (queued) return;
    queued = true;
    refreshing = refreshing
      .then(() => {
        queued = false;
        return refresh();
      })
      .catch(failed);
  };
}

/** Runs calls on the catalog's connection, shared by every tenant, or on each tenant's own where secrets differ. */
function connectionUser(
  catalog: McpConnection,
  perTenant: { pool: TenantConnectionPool; settingsFor: ReturnType<typeof settingsResolver> } | undefined,
): ConnectionUser {
  if (!perTenant) return async (_tenantId, _toolName, call) => call(catalog, (value) => value);
  const { pool, settingsFor } = perTenant;
  return async (tenantId, toolName, call) => {
    const resolved = await settingsFor(tenantId, toolName);
    const hide = <T>(value: T): T => redactSecrets(value, resolved.secretValues);
    return withSecretsHidden(resolved.secretValues, () =>
      pool.use(tenantId, resolved, (connection) => call(connection, hide)),
    );
  };
}

/** Whether a transport's headers (HTTP) or environment (stdio) name a secret, so each tenant needs its own link. */
function holdsSecretReferences(transport: McpStdioTransport | McpHttpTransport): boolean {
  const settings = transport.type === 'http' ? (transport.headers ?? {}) : (transport.env ?? {});
  return Object.values(settings).some(isSecretReference);
}

/** Resolves the server's settings for a tenant and tool; a secret that fails to resolve fails the call, for good. */
function settingsResolver(
  { name: server, transport }: McpToolsOptions,
  secrets: SecretSource | undefined,
): (tenantId: string, toolName: string) => Promise<ResolvedSettings> {
  return (tenantId, toolName) =>
    resolveTransportWithSecrets(transport, secrets, { tenantId, toolName, mcpServer: server }).catch(
      (error: unknown) => {
        const reason = errorMessage(error);
        // A missing secret's own message names the server already.
        const message = reason.startsWith(`MCP server '${server}'`) ? reason : `MCP server '${server}': ${reason}`;
        throw new RelayError('tool_transport_failed', message, { details: { retryable: false } });
      },
    );
}

/**
 * The transport with its secret references resolved, and the secret values to hide from what its calls return: each
 * value, and the credentials of one written `Scheme credentials` (`Bearer …`), which a server may echo alone.
 */
async function resolveTransportWithSecrets(
  transport: McpStdioTransport | McpHttpTransport,
  secrets: SecretSource | undefined,
  context: SecretLookup,
): Promise<ResolvedSettings> {
  const settings = transport.type === 'http' ? transport.headers : transport.env;
  const { config, values } = await resolveSecretReferences(settings ?? {}, secrets, context);
  const resolved = config as Record<string, string>;
  const secretValues = values.flatMap((value) => [value, ...(/^\S+ (\S+)$/.exec(value)?.slice(1) ?? [])]);
  if (transport.type === 'http') {
    return { transport: { type: 'http', url: transport.url, headers: resolved }, secretValues };
  }
  const stdio: ResolvedTransport = {
    type: 'stdio',
    command: transport.command,
    args: transport.args ?? [],
    env: resolved,
    ...(transport.cwd !== undefined ? { cwd: transport.cwd } : {}),
  };
  return { transport: stdio, secretValues };
}

/**
 * Runs a call made with a tenant's secrets, hiding them from its result and its error (causes included): a tool may
 * return its token, and a server that refuses one may quote it in its answer, and both reach history, the model and
 * the worker's log.
 */
async function withSecretsHidden<T>(secretValues: readonly string[], call: () => Promise<T>): Promise<T> {
  try {
    return redactSecrets(await call(), secretValues);
  } catch (error) {
    throw hideSecretsInError(error, secretValues);
  }
}

/**
 * The server's tools as definitions. A tool the server describes in a way Relay-E cannot offer (a JSON Schema Zod
 * cannot read) is left out, with why, and an error in the log, so one odd tool does not take the server's other tools
 * away. A tool the operator's own policy cannot apply to (2 approvals asked of 1 approver) throws: a mistake to fix.
 */
function toToolDefinitions(
  options: McpToolsOptions,
  listed: readonly Tool[],
  logger: Logger,
  onConnection: ConnectionUser,
): { tools: ToolDefinition[]; leftOut: LeftOutTool[] } {
  const server = options.name;
  const names = mapToolNames(
    server,
    options.prefix ?? server,
    listed.map((tool) => tool.name),
  );
  const byName = new Map(listed.map((tool) => [tool.name, tool]));
  const tools: ToolDefinition[] = [];
  const leftOut: LeftOutTool[] = [];
  for (const [modelName, toolName] of names) {
    const tool = byName.get(toolName) as Tool;
    const annotations = toAnnotations(tool);
    const policy = resolveToolPolicy(toolName, annotations, options, options.tools);
    // Rules sound one by one may clash once combined; that is the operator's mistake to fix, so it throws.
    checkPolicy(server, `, tool '${toolName}'`, policy);
    try {
      tools.push(toToolDefinition(options, { tool, modelName, annotations, policy }, onConnection));
    } catch (error) {
      // The reason alone: the stack of a definition's refusal says nothing about the server's tool.
      const reason = errorMessage(error);
      logger.error('Left out an MCP tool Relay-E cannot offer', { server, toolName, reason });
      leftOut.push({ source: server, tool: toolName, name: modelName, reason });
    }
  }
  return { tools, leftOut };
}

/**
 * Runs `call` on the connection that serves the tenant; `hide` replaces that connection's secret values (none on a
 * shared connection), for what the call passes on before it returns, such as its progress.
 */
type ConnectionUser = (
  tenantId: string,
  toolName: string,
  call: (connection: McpConnection, hide: <T>(value: T) => T) => Promise<unknown>,
) => Promise<unknown>;

/** One tool of the server, as it lists it, with the name the model calls and the policy that applies to it. */
interface ListedTool {
  tool: Tool;
  modelName: string;
  annotations: ToolAnnotations | undefined;
  policy: ResolvedToolPolicy;
}

function toToolDefinition(
  options: McpToolsOptions,
  { tool, modelName, annotations, policy }: ListedTool,
  onConnection: ConnectionUser,
): ToolDefinition {
  const { name: server } = options;
  const toolName = tool.name;
  const safeToRepeat = annotations?.readOnlyHint === true || annotations?.idempotentHint === true;
  return defineJsonSchemaTool({
    name: modelName,
    description: tool.description?.trim() || tool.title || `Tool '${toolName}' of MCP server '${server}'`,
    inputSchema: tool.inputSchema,
    requiresApproval: policy.requiresApproval,
    retry: policy.retry,
    ...(policy.approvalTimeoutMs !== undefined ? { approvalTimeoutMs: policy.approvalTimeoutMs } : {}),
    ...(policy.approvers !== undefined ? { approvers: policy.approvers } : {}),
    ...(policy.approvalsRequired !== undefined ? { approvalsRequired: policy.approvalsRequired } : {}),
    ...(policy.remindApproversBeforeExpiryMs !== undefined
      ? { remindApproversBeforeExpiryMs: policy.remindApproversBeforeExpiryMs }
      : {}),
    ...(policy.timeoutMs !== undefined ? { timeoutMs: policy.timeoutMs } : {}),
    ...(policy.maxResultBytes !== undefined ? { maxResultBytes: policy.maxResultBytes } : {}),
    source: { kind: 'mcp', server, tool: toolName },
    ...(annotations ? { annotations } : {}),
    execute: (input, ctx) =>
      onConnection(ctx.tenantId, modelName, (connection, hide) =>
        callMcpTool(connection, { server, toolName, input, safeToRepeat }, withProgressHidden(ctx, hide)),
      ),
  });
}

/** The context with its progress reports passed through `hide`: a server may echo its credentials in a progress note. */
function withProgressHidden(ctx: ToolContext, hide: <T>(value: T) => T): ToolContext {
  const { reportProgress } = ctx;
  return reportProgress ? { ...ctx, reportProgress: (progress) => reportProgress(hide(progress)) } : ctx;
}

function toAnnotations(tool: Tool): ToolAnnotations | undefined {
  const source = tool.annotations;
  if (!source) return undefined;
  const annotations: ToolAnnotations = {};
  if (typeof source.title === 'string') annotations.title = source.title;
  for (const hint of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const) {
    if (typeof source[hint] === 'boolean') annotations[hint] = source[hint];
  }
  return annotations;
}
