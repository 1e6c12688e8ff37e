import { describe, expect, it } from 'vitest';
import { ModelProviderError } from '../../../src/model/model-provider.js';
import type { ModelCall } from '../../../src/model/model-provider.js';
import { scriptedModel } from '../../../src/testing/scripted-model.js';
import type { ScriptedTurn } from '../../../src/testing/scripted-model.js';

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

  it('fails at once, not retryable, naming the error, when a script throws', async () => {
    const model = scriptedModel(() => {
      throw new Error('assertion in script');
    });
    const failure = await model.generate(call('run', 2), options).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ModelProviderError);
    expect(failure).toMatchObject({
      retryable: false,
      message: 'Scripted model failed at step 2: the script threw: assertion in script',
    });
  });

  it('passes on a ModelProviderError the script throws, to play a provider failure', async () => {
    const overloaded = new ModelProviderError('overloaded', { retryable: true, retryAfterMs: 10 });
    const model = scriptedModel(() => {
      throw overloaded;
    });
    await expect(model.generate(call('run', 1), options)).rejects.toBe(overloaded);
  });

  it.each([
    ['nothing', () => undefined, 'got undefined'],
    ['a string', () => 'done', 'got "done"'],
    ['a turn without text or calls', () => ({ toolCalls: [] }), 'got {"toolCalls":[]}'],
  ])('fails at once, not retryable, naming what it got, when a script returns %s', async (_what, script, got) => {
    const model = scriptedModel(script as () => ScriptedTurn);
    const failure = await model.generate(call('run', 1), options).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ModelProviderError);
    expect(failure).toMatchObject({ retryable: false });
    const notATurn = 'which is not a turn ({ text }, or { toolCalls } with at least one call)';
    expect((failure as Error).message).toBe(`Scripted model failed at step 1: ${got}, ${notATurn}`);
  });

  it('refuses an empty list of calls in a list script too, and plays an empty answer given as text', async () => {
    const model = scriptedModel([{ toolCalls: [] }, { text: '' }]);
    await expect(model.generate(call('run', 1), options)).rejects.toMatchObject({ retryable: false });
    expect(await model.generate(call('run', 2), options)).toMatchObject({ text: '', finishReason: 'stop' });
  });
});
