import { describe, expect, it } from 'vitest';
import { agentRunInputSchema } from '../../../src/shared/run-input-schema.js';

const base = { tenantId: 'acme', model: 'openai:gpt-4.1-mini', prompt: 'hi' };

function issuesOf(input: unknown) {
  const result = agentRunInputSchema().safeParse(input);
  return result.success ? [] : result.error.issues.map((issue) => ({ path: issue.path, message: issue.message }));
}

describe('agentRunInputSchema: modelSettings', () => {
  it('accepts every setting within its range', () => {
    const modelSettings = { temperature: 0, topP: 1, maxOutputTokens: 1, seed: -3, stopSequences: ['END'] };
    expect(issuesOf({ ...base, modelSettings })).toEqual([]);
  });

  it('refuses out-of-range values and a misspelt setting, each with its path', () => {
    const modelSettings = { temperature: 2.5, topP: 0, maxOutputTokens: 1.5, temprature: 0.2 };
    const paths = issuesOf({ ...base, modelSettings }).map((issue) => issue.path.join('.'));
    expect(paths.sort()).toEqual([
      'modelSettings',
      'modelSettings.maxOutputTokens',
      'modelSettings.temperature',
      'modelSettings.topP',
    ]);
    expect(issuesOf({ ...base, modelSettings: { stopSequences: Array(17).fill('x') } })).toHaveLength(1);
  });
});
