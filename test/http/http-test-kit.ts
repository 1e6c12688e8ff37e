import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect } from 'vitest';
import type { ModelCall } from '../../src/model/model-provider.js';
import type { ApiKeyTenant } from '../../src/http/api-keys.js';
import { startApiServer } from '../../src/http/start-api-server.js';
import type { ApiServer, StartApiServerOptions } from '../../src/http/start-api-server.js';
import type { RunEvent, RunSnapshot } from '../../src/shared/run-types.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import type { ScriptedTurn } from '../../src/testing/scripted-model.js';
import { useRelayTestKit } from '../helpers/relay-test-kit.js';
import type { FileTestKit, RunningWorker } from '../helpers/relay-test-kit.js';
import { createLedger, createTestTools } from '../helpers/test-tools.js';
import type { ToolLedger } from '../helpers/test-tools.js';

/** Two tenants and three keys: `alice` and an unnamed key for tenant A, one key for tenant B. */
export function createTestTenants() {
  const suffix = randomUUID().slice(0, 8);
  const tenantA = `http-a-${suffix}`;
  const tenantB = `http-b-${suffix}`;
  const keys = { alice: `key-alice-${suffix}`, unnamedA: `key-unnamed-a-${suffix}`, bob: `key-bob-${suffix}` };
  const apiKeys = new Map<string, ApiKeyTenant>([
    [keys.alice, { tenantId: tenantA, name: 'alice' }],
    [keys.unnamedA, { tenantId: tenantA }],
    [keys.bob, { tenantId: tenantB, name: 'bob' }],
  ]);
  return { tenantA, tenantB, keys, apiKeys };
}

/** The id a run gives the model's first call (`call_<step>_<index>`), whatever id the model sent. */
export const payCallId = 'call_1_0';

/** The model the HTTP tests run: `pay …` proposes a transfer that needs approval, `add` a free tool call, anything else answers. */
export function httpTestModel(call: ModelCall): ScriptedTurn {
  const prompt = promptOf(call);
  if (call.step === 1 && prompt.startsWith('pay')) {
    return { toolCalls: [{ id: 'pay', name: 'transfer_funds', input: { from: 'A', to: 'B', amount: 100 } }] };
  }
  if (call.step === 1 && prompt === 'add') return { toolCalls: [{ id: 'sum', name: 'add', input: { a: 2, b: 3 } }] };
  return { text: 'done' };
}

/** The run's prompt, as a scripted model sees it. */
export function promptOf(call: ModelCall): string {
  const first = call.messages.find((message) => message.role === 'user');
  return first && 'content' in first ? first.content : '';
}

export interface HttpTestApi {
  url: string;
  worker: RunningWorker;
  ledger: ToolLedger;
  server: ApiServer;
  /** `fetch` against the server, with `key` sent as a bearer token and `json` as the body. */
  request(path: string, init?: RequestInit & { key?: string; json?: unknown }): Promise<Response>;
  /** Polls `GET /v1/runs/:id` with `key` until the snapshot satisfies `predicate`. */
  waitForRun(runId: string, key: string, predicate: (snapshot: RunSnapshot) => boolean): Promise<RunSnapshot>;
  close(): Promise<void>;
}

/** Starts a worker with the test tools and `httpTestModel`, and an API server over its client. */
export async function startHttpTestApi(
  kit: FileTestKit,
  options: Omit<StartApiServerOptions, 'client'>,
): Promise<HttpTestApi> {
  const ledger = createLedger();
  const worker = await kit.startWorker({
    tools: createTestTools(ledger),
    models: { scripted: scriptedModel(httpTestModel) },
    // An API given a payload store reads what the workers stored: they share it.
    ...(options.payloadStore ? { payloadStore: options.payloadStore } : {}),
  });
  const server = await startApiServer({ ...options, client: worker.client });
  const request: HttpTestApi['request'] = (path, init = {}) => {
    const { key, json, headers, ...rest } = init;
    return fetch(`${server.url}${path}`, {
      ...rest,
      headers: {
        ...(key !== undefined ? { authorization: `Bearer ${key}` } : {}),
        ...(json !== undefined ? { 'content-type': 'application/json' } : {}),
        ...(headers as Record<string, string> | undefined),
      },
      ...(json !== undefined ? { body: JSON.stringify(json) } : {}),
    });
  };
  return {
    url: server.url,
    worker,
    ledger,
    server,
    request,
    async waitForRun(runId, key, predicate) {
      const deadline = Date.now() + 20_000;
      let snapshot: RunSnapshot | undefined;
      while (Date.now() < deadline) {
        const response = await request(`/v1/runs/${runId}`, { key });
        snapshot = response.ok ? ((await response.json()) as RunSnapshot) : undefined;
        if (snapshot && predicate(snapshot)) return snapshot;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      throw new Error(`Run ${runId} did not reach the expected state; last: ${JSON.stringify(snapshot)}`);
    },
    async close() {
      await server.close();
      await worker.stop();
    },
  };
}

/** The API as a test file uses it: closed by the file's own `afterAll`, never by a test. */
export type FileHttpTestApi = Omit<HttpTestApi, 'close'>;

/**
 * The test file's tenants, kit and API (`startHttpTestApi` with the tenants' keys and `options`): the API is started
 * before the file's first test (`beforeAll`) and closed after its last, once the `afterAll` hooks the file registers
 * later have run. Call it at the top of the file; the API's members read the started API, so use them inside tests
 * and hooks.
 */
export function useHttpTestApi(
  options: Omit<StartApiServerOptions, 'client' | 'apiKeys'> = {},
): ReturnType<typeof createTestTenants> & { kit: FileTestKit; api: FileHttpTestApi } {
  const tenants = createTestTenants();
  const kit = useRelayTestKit();
  let started: HttpTestApi | undefined;
  beforeAll(async () => {
    started = await startHttpTestApi(kit, { ...options, apiKeys: tenants.apiKeys });
  });
  afterAll(async () => {
    await started?.close();
  });
  const made = (): HttpTestApi => {
    if (!started) throw new Error('The HTTP test API is started in beforeAll: use it inside tests and hooks');
    return started;
  };
  const api: FileHttpTestApi = {
    get url() {
      return made().url;
    },
    get worker() {
      return made().worker;
    },
    get ledger() {
      return made().ledger;
    },
    get server() {
      return made().server;
    },
    request: (path, init) => made().request(path, init),
    waitForRun: (runId, key, predicate) => made().waitForRun(runId, key, predicate),
  };
  return { ...tenants, kit, api };
}

/** One message of a server-sent event stream: an event, or a comment line (`: heartbeat`). */
export type ServerSentMessage = { comment: string } | { id?: string; event?: string; data: string };

/** Parses a `text/event-stream` body message by message, until the server ends it or the request is aborted. */
export async function* readServerSentEvents(response: Response): AsyncGenerator<ServerSentMessage> {
  if (!response.body) return;
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      let end = buffer.indexOf('\n\n');
      while (end >= 0) {
        yield parseMessage(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
        end = buffer.indexOf('\n\n');
      }
    }
  } catch (error) {
    if (!(error instanceof Error && error.name === 'AbortError')) throw error;
  }
}

function parseMessage(block: string): ServerSentMessage {
  const fields: { id?: string; event?: string; data: string[] } = { data: [] };
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) return { comment: line.slice(1).trim() };
    const colon = line.indexOf(':');
    const name = line.slice(0, colon);
    const value = line.slice(colon + 1).replace(/^ /, '');
    if (name === 'data') fields.data.push(value);
    else if (name === 'id' || name === 'event') fields[name] = value;
  }
  return { ...fields, data: fields.data.join('\n') };
}

/** The run events among server-sent messages, checked to carry their seq as `id` and their type as `event`. */
export function runEventsOf(messages: readonly ServerSentMessage[]): RunEvent[] {
  return messages.flatMap((message) => {
    if ('comment' in message) return [];
    const event = JSON.parse(message.data) as RunEvent;
    if (message.id !== String(event.seq) || message.event !== event.type) {
      throw new Error(`SSE framing does not match the event: ${JSON.stringify(message)}`);
    }
    return [event];
  });
}

/** Signs in to the inbox at `url` with `apiKey` and returns the session cookie (`name=value`). */
export async function signInToInbox(url: string, apiKey: string): Promise<string> {
  const response = await fetch(`${url}/inbox/session`, {
    method: 'POST',
    body: new URLSearchParams({ apiKey }),
    redirect: 'manual',
  });
  expect(response.status).toBe(303);
  const cookie = response.headers.get('set-cookie')?.split(';')[0];
  expect(cookie).toMatch(/^relay_e_inbox=/);
  return cookie ?? '';
}

/** Signs in to the inbox as {@link signInToInbox} does, and reads the CSRF token its page carries for posts. */
export async function inboxSession(url: string, apiKey: string): Promise<{ cookie: string; csrf: string }> {
  const cookie = await signInToInbox(url, apiKey);
  const page = await (await fetch(`${url}/`, { headers: { cookie } })).text();
  return { cookie, csrf: /<meta name="relay-csrf" content="([^"]+)"/.exec(page)?.[1] ?? '' };
}

/** Starts `pay B` (a transfer that needs approval, waiting up to an hour) with `key`, and waits until it waits. */
export async function awaitingPayment(api: Pick<HttpTestApi, 'request' | 'waitForRun'>, key: string): Promise<string> {
  const started = await api.request('/v1/runs', {
    method: 'POST',
    key,
    json: { model: 'scripted:test', prompt: 'pay B', approvalTimeout: '1h' },
  });
  const { runId } = (await started.json()) as { runId: string };
  await api.waitForRun(runId, key, (run) => run.status === 'awaiting_approval');
  return runId;
}

/**
 * A body of 1,000 copies of `chunk`, far more than any body limit, sent without a declared length; `chunksRead` says
 * how many the server pulled, so a test can tell it answered without reading the body whole.
 */
export function streamedOversizedBody(chunk: Uint8Array): {
  body: ReadableStream<Uint8Array>;
  chunksRead: () => number;
} {
  let pulled = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (pulled++ < 1_000) controller.enqueue(chunk);
      else controller.close();
    },
  });
  return { body, chunksRead: () => pulled };
}
