import { Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection } from '@temporalio/worker';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RelayClient } from '../../src/client/relay-client.js';
import { startTemporalDevServer } from '../../src/dev/temporal-dev-server.js';
import type { TemporalDevServer } from '../../src/dev/temporal-dev-server.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import { createWorker } from '../../src/worker/create-worker.js';
import { bundleRelayWorkflows } from '../../src/worker/relay-workflows.js';
import { launchChromium } from '../helpers/chromium.js';
import { waitForRun } from '../helpers/relay-test-kit.js';
import { createLedger, createTestTools } from '../helpers/test-tools.js';

// The Temporal Web UI that `start-dev` serves, in real Chromium: a run waiting for a human says so on its page.
let server: TemporalDevServer;
let browser: Browser;

beforeAll(async () => {
  browser = await launchChromium();
  server = await startTemporalDevServer({ ui: true });
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

describe('the Temporal Web UI', () => {
  it('names the tool, the call and how to decide on the page of a run that waits for approval', async () => {
    const nativeConnection = await NativeConnection.connect({ address: server.address });
    const connection = await Connection.connect({ address: server.address });
    const worker = await createWorker({
      tools: createTestTools(createLedger()),
      models: {
        scripted: scriptedModel([
          { toolCalls: [{ name: 'transfer_funds', input: { from: 'A', to: 'B', amount: 7 } }] },
          { text: 'ok' },
        ]),
      },
      taskQueue: 'ui',
      connection: nativeConnection,
      workflowBundle: await bundleRelayWorkflows({ logger: new DefaultLogger('ERROR') }),
    });
    const running = worker.run();
    const client = await RelayClient.connect({ connection, taskQueue: 'ui' });
    try {
      const { runId } = await client.startRun({ tenantId: 'acme', model: 'scripted:ui', prompt: 'pay B 7' });
      await waitForRun(client, runId, (run) => run.status === 'awaiting_approval');
      const page = await browser.newPage();
      await page.goto(`${server.uiUrl}/namespaces/default/workflows/${encodeURIComponent(runId)}`);
      // The approval wait's timer is named in the event history; the current details sit under "User Metadata".
      await expect
        .poll(async () => page.locator('body').innerText(), { timeout: 30_000 })
        .toContain('approval of transfer_funds (call_1_0)');
      await page.getByText('User Metadata', { exact: true }).click();
      // The UI renders markdown details in sandboxed frames: read the text of every frame.
      const pageText = async () =>
        (
          await Promise.all(
            page.frames().map((frame) =>
              frame
                .locator('body')
                .innerText()
                .catch(() => ''),
            ),
          )
        ).join('\n');
      await expect.poll(pageText, { timeout: 30_000 }).toContain('Waiting for approval');
      const text = await pageText();
      expect(text).toContain('transfer_funds');
      expect(text).toContain('call_1_0');
      expect(text).toContain(`approve ${runId} call_1_0`);
      if (process.env['RELAY_E_UPDATE_SCREENSHOTS'] === '1') {
        await page.screenshot({ path: 'docs/images/temporal-ui-current-details.png', fullPage: true });
      }
      await client.approve(runId, 'call_1_0');
      await client.result(runId);
    } finally {
      worker.shutdown();
      await running;
      await connection.close();
      await nativeConnection.close();
    }
  });
});
