import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { createActivities } from '../../../activities/index.js';
import { ModelRegistry } from '../../../src/model/model-registry.js';
import { scriptedModel } from '../../../src/testing/scripted-model.js';
import { defineTool } from '../../../src/tool/define-tool.js';
import { ToolExecutor } from '../../../src/tool/tool-executor.js';
import { ToolRegistry } from '../../../src/tool/tool-registry.js';
import { mcpTools } from '../../../src/mcp/mcp-tools.js';
import { RelayPlugin } from '../../../src/worker/relay-plugin.js';
import { checkApprovalWebhook } from '../../../src/notify/approval-webhook.js';
import type { ApprovalWebhooks } from '../../../src/notify/approval-webhook.js';

const webhook = { url: 'http://127.0.0.1:9/approvals', secret: 'reminder-unit-secret-0123' };
const models = { scripted: scriptedModel([{ text: 'done' }]) };
const tool = (name: string, options: { remindApproversBeforeExpiryMs?: number } = {}) =>
  defineTool({
    name,
    description: 'Pays.',
    inputSchema: z.object({ amount: z.number() }),
    requiresApproval: true,
    execute: () => 'paid',
    ...options,
  });
const quote = tool('pay_quote', { remindApproversBeforeExpiryMs: 5 * 60_000 });

/** The catalog a run of a worker with these settings would record, by tool name. */
function snapshotOf(
  approvalReminderMs: number | undefined,
  webhooks: ApprovalWebhooks | 'none' = webhook,
  tenantId?: string,
) {
  const registry = new ToolRegistry([quote, tool('pay')]);
  const activities = createActivities({
    registry,
    executor: new ToolExecutor(registry),
    models: new ModelRegistry(models),
    ...(webhooks === 'none' ? {} : { approvalWebhooks: webhooks }),
    ...(approvalReminderMs !== undefined ? { approvalReminderMs } : {}),
  });
  return activities.snapshotToolCatalog(tenantId === undefined ? {} : { tenantId }).then(({ entries = [] }) => {
    return Object.fromEntries(entries.map((entry) => [entry.name, entry]));
  });
}

describe("a tool's own reminder lead time", () => {
  it("replaces the worker's for its calls and leaves the others the worker's", async () => {
    const catalog = await snapshotOf(3_600_000);
    expect(catalog['pay_quote']).toMatchObject({ notifiesApprovers: true, remindApproversBeforeMs: 300_000 });
    expect(catalog['pay']).toMatchObject({ notifiesApprovers: true, remindApproversBeforeMs: 3_600_000 });
    const withoutWorkerReminder = await snapshotOf(undefined);
    expect(withoutWorkerReminder['pay_quote']?.remindApproversBeforeMs).toBe(300_000);
    expect(withoutWorkerReminder['pay']).not.toHaveProperty('remindApproversBeforeMs');
  });

  it('is never recorded by a worker that sends no notices, and such a worker refuses the tool when it starts', async () => {
    const catalog = await snapshotOf(undefined, 'none');
    expect(catalog['pay_quote']).not.toHaveProperty('remindApproversBeforeMs');
    expect(catalog['pay_quote']).not.toHaveProperty('notifiesApprovers');
    await expect(RelayPlugin.create({ tools: [quote], models })).rejects.toMatchObject({
      code: 'invalid_input',
      message: expect.stringContaining("Tool 'pay_quote' reminds approvers before a call expires") as unknown,
    });
    await expect(RelayPlugin.create({ tools: [quote], models, approvalWebhook: webhook })).resolves.toBeInstanceOf(
      RelayPlugin,
    );
  });

  it('is refused, on a worker without a webhook, from an MCP server whose policy asks for it, before it connects', async () => {
    // No such command: the refusal must come before the worker tries to start the server.
    const transport = { type: 'stdio', command: '/nonexistent/relay-e-mcp-server' } as const;
    const reminding = mcpTools({
      name: 'ops',
      transport,
      tools: { 'deploy_*': { remindApproversBeforeExpiryMs: 600_000 } },
    });
    expect(reminding.remindsApprovers).toBe(true);
    expect(mcpTools({ name: 'ops', transport, remindApproversBeforeExpiryMs: 600_000 }).remindsApprovers).toBe(true);
    expect(mcpTools({ name: 'ops', transport, approvalTimeoutMs: 600_000 })).not.toHaveProperty('remindsApprovers');
    await expect(RelayPlugin.create({ tools: [reminding], models })).rejects.toMatchObject({
      code: 'invalid_input',
      message: expect.stringContaining(
        "Tool source 'ops' reminds approvers before a call expires (remindApproversBeforeExpiryMs in its policy)",
      ) as unknown,
    });
  });

  it("wins over a tenant's webhook's lead time, which wins over the worker's for that tenant's runs", async () => {
    const perTenant: ApprovalWebhooks = (tenantId) =>
      tenantId === 'acme' ? { ...webhook, remindBeforeExpiry: '30m' } : tenantId === 'globex' ? webhook : undefined;
    const acme = await snapshotOf(3_600_000, perTenant, 'acme');
    expect(acme['pay']?.remindApproversBeforeMs).toBe(1_800_000);
    expect(acme['pay_quote']?.remindApproversBeforeMs).toBe(300_000);
    expect((await snapshotOf(3_600_000, perTenant, 'globex'))['pay']?.remindApproversBeforeMs).toBe(3_600_000);
    // A webhook that cannot be used sets no lead time: its notices fail, each failure recorded.
    const broken: ApprovalWebhooks = () => ({ ...webhook, remindBeforeExpiry: 'soon' });
    expect((await snapshotOf(3_600_000, broken, 'acme'))['pay']?.remindApproversBeforeMs).toBe(3_600_000);
    expect(() => checkApprovalWebhook({ ...webhook, remindBeforeExpiry: '-5m' })).toThrow(
      /must be a positive duration/,
    );
  });

  it('must be a positive whole number of milliseconds, on a tool that asks for approval', () => {
    expect(() => tool('pay_bad', { remindApproversBeforeExpiryMs: 0 })).toThrow(/remindApproversBeforeExpiryMs/);
    expect(() =>
      defineTool({
        name: 'read',
        description: 'Reads.',
        inputSchema: z.object({}),
        execute: () => 'read',
        remindApproversBeforeExpiryMs: 60_000,
      }),
    ).toThrow(/remindApproversBeforeExpiryMs needs requiresApproval/);
  });
});
