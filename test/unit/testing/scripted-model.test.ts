import { describe, expect, it } from 'vitest';
import type { ModelCall } from '../../../src/model/model-provider.js';
import { scriptedModel } from '../../../src/testing/scripted-model.js';

function call(runId: string, step: number, prompt = 'hi'): ModelCall {
  return {
    model: 'scripted:test',
    modelName: 'test',
    messages: [{ role: 'user', content: prompt }],
    tools: [],
    step,
    runId,
    tenantId: 'acme',
  };
}

const options = { signal: new AbortController().signal };

describe('the scripted model', () => {
  it('records every request it answers, so a test can assert on what the model was sent', async () => {
    const model = scriptedModel([{ text: 'one' }, { text: 'two' }]);
    await model.generate(call('run_a', 1, 'first'), options);
    await model.generate(call('run_b', 1, 'other'), options);
    await model.generate(call('run_a', 2, 'second'), options);
    expect(model.requests.map((request) => request.runId)).toEqual(['run_a', 'run_b', 'run_a']);
    expect(model.requestsOf('run_a').map((request) => request.messages[0])).toEqual([
      { role: 'user', content: 'first' },
      { role: 'user', content: 'second' },
    ]);
  });

  it('answers with the finish reason a turn names, else tool-calls or stop', async () => {
    const model = scriptedModel([
      { toolCalls: [{ name: 'add', input: {} }] },
      { text: 'All done.' },
      { text: '', finishReason: 'length' },
    ]);
    const reasons = [];
    for (const step of [1, 2, 3]) reasons.push((await model.generate(call('run', step), options)).finishReason);
    expect(reasons).toEqual(['tool-calls', 'stop', 'length']);
  });

  it('keeps only the latest requests up to its limit, and none with a limit of 0', async () => {
    const bounded = scriptedModel(() => ({ text: 'ok' }), { recordRequests: 2 });
    const silent = scriptedModel(() => ({ text: 'ok' }), { recordRequests: 0 });
    for (const step of [1, 2, 3]) {
      await bounded.generate(call('run', step), options);
      await silent.generate(call('run', step), options);
    }
    expect(bounded.requests.map((request) => request.step)).toEqual([2, 3]);
    expect(silent.requests).toEqual([]);
  });
});
