/**
 * Agent runs on a Temporal worker you already run, through Relay-E's Temporal plugin (docs/your-own-project.md):
 *
 *   npm run relay-e -- dev   # in another terminal, for a Temporal server on localhost:7233
 *   node --import tsx examples/temporal-plugin.ts
 */
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { defineTool, openaiProvider } from '@relay-e/engine';
import { RelayPlugin } from '@relay-e/engine/worker';
import { z } from 'zod';

const lookUpOrder = defineTool({
  name: 'look_up_order',
  description: 'Return the shipping status of a customer order by its id.',
  inputSchema: z.object({ order_id: z.string() }),
  execute: async ({ order_id }) => ({ order_id, status: 'shipped' }),
});

// #region plugin
const relay = await RelayPlugin.create({
  tools: [lookUpOrder],
  models: { openai: openaiProvider() },
});

const worker = await Worker.create({
  connection: await NativeConnection.connect({ address: 'localhost:7233' }),
  taskQueue: 'orders',
  // Your own workflows and activities stay as they are; the plugin adds Relay-E's.
  plugins: [relay],
});
// #endregion plugin

// A client given the plugin shares its data converter (and encryption keys, when the plugin has them).
export const client = new Client({ connection: await Connection.connect(), plugins: [relay] });

await worker.run();
