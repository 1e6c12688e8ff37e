/**
 * The peer's agent: `generateText` inside a Temporal workflow with the `@temporalio/ai-sdk` provider (each model
 * call an activity) and a tool whose `execute` calls an activity, which is how that integration's samples
 * build a tool-calling agent. The number of steps comes from the same prompt the other variants get.
 */
import { temporalProvider } from '@temporalio/ai-sdk/workflow';
import { proxyActivities } from '@temporalio/workflow';
import { generateText, stepCountIs, tool } from 'ai';
import { z } from 'zod';
import { addToolDescription } from '../lib/agent-script.js';
import type { peerActivities } from './peer-activities.js';

const { addNumbers } = proxyActivities<typeof peerActivities>({ startToCloseTimeout: '1 minute' });

/** Runs the model until it answers in text, at most `maxSteps` model calls. */
export async function peerAgent(prompt: string, maxSteps: number): Promise<string> {
  const result = await generateText({
    model: temporalProvider.languageModel('bench'),
    prompt,
    tools: {
      add: tool({
        description: addToolDescription,
        inputSchema: z.object({ a: z.number(), b: z.number() }),
        execute: (input) => addNumbers(input),
      }),
    },
    stopWhen: stepCountIs(maxSteps),
  });
  return result.text;
}
