import { describe, expect, it } from 'vitest';
import { awaitingPayment, inboxSession, payCallId, useHttpTestApi } from './http-test-kit.js';

const { keys, api } = useHttpTestApi();

/** JSON text of `levels` lists, one in another, around the text `"x"`. */
function nestedListsText(levels: number): string {
  return `${'['.repeat(levels)}"x"${']'.repeat(levels)}`;
}

/** A run's start that replays a tool call whose input nests `levels` lists inside its object (one level more). */
function startWithToolCallInput(levels: number): string {
  const messages = [
    '{"role":"user","content":"hi"}',
    `{"role":"assistant","content":"","toolCalls":[{"id":"c","name":"add","input":{"value":${nestedListsText(levels)}}}]}`,
    '{"role":"tool","toolCallId":"c","toolName":"add","result":{"success":true,"toolName":"add","data":1}}',
  ];
  return `{"model":"scripted:test","messages":[${messages.join(',')}]}`;
}

const tooDeep = {
  status: 422,
  code: 'invalid_input',
  detail: 'The body nests objects and arrays more than 256 levels deep',
};

describe('a request body nested deeper than the API reads', () => {
  it.each([300, 100_000])('is refused as invalid_input, not answered 500: %i levels', async (levels) => {
    const response = await fetch(`${api.url}/v1/runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${keys.alice}`, 'content-type': 'application/json' },
      body: startWithToolCallInput(levels),
    });
    expect(response.status).toBe(422);
    expect(await response.json()).toMatchObject(tooDeep);
  });

  it('leaves a run whose messages hold a tool call input as deep as a run checks alone', async () => {
    // The body's own levels: the body, messages, the message, toolCalls, the call, its input, then the lists.
    const response = await fetch(`${api.url}/v1/runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${keys.alice}`, 'content-type': 'application/json' },
      body: startWithToolCallInput(127),
    });
    expect(response.status).toBe(201);
  });

  it('is refused by the inbox as by the API, before any run is asked', async () => {
    const runId = await awaitingPayment(api, keys.alice);
    const { cookie, csrf } = await inboxSession(api.url, keys.alice);
    for (const route of ['check', 'approve']) {
      const answer = await fetch(`${api.url}/inbox/runs/${runId}/${route}`, {
        method: 'POST',
        headers: { cookie, 'content-type': 'application/json', 'x-relay-csrf': csrf },
        body: `{"toolCallId":"${payCallId}","input":${nestedListsText(100_000)}}`,
      });
      expect(answer.status).toBe(422);
      expect(await answer.json()).toMatchObject(tooDeep);
    }
    const run = await api.request(`/v1/runs/${runId}`, { key: keys.alice });
    expect(await run.json()).toMatchObject({
      status: 'awaiting_approval',
      pendingApprovals: [{ toolCallId: payCallId }],
    });
  });
});
