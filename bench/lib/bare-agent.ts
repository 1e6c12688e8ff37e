/**
 * The floor under every durable variant: a bare Temporal workflow that does the same steps (one model activity,
 * one tool activity) with nothing else, no validation, no transcript, no events. What a Temporal agent cannot
 * go below on this server.
 */
import { condition, defineQuery, defineUpdate, proxyActivities, setHandler } from '@temporalio/workflow';
import type { bareAgentActivities } from './bare-agent-activities.js';

const { modelTurn, addNumbers } = proxyActivities<typeof bareAgentActivities>({ startToCloseTimeout: '1 minute' });

export const approveUpdate = defineUpdate<void>('approve');
export const awaitingApprovalQuery = defineQuery<boolean>('awaitingApproval');

/** Runs `steps` tool steps and a final model turn; with `approval`, each tool call waits for the update. */
export async function bareAgent(steps: number, approval: boolean): Promise<string> {
  let awaiting = false;
  let approved = false;
  setHandler(approveUpdate, () => {
    approved = true;
  });
  setHandler(awaitingApprovalQuery, () => awaiting);
  for (let step = 1; ; step++) {
    const turn = await modelTurn(step, steps);
    if ('text' in turn) return turn.text;
    if (approval) {
      awaiting = true;
      await condition(() => approved);
      awaiting = false;
      approved = false;
    }
    await addNumbers(turn.toolCall);
  }
}
