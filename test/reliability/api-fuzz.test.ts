import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { beforeAll, expect, it } from 'vitest';
import { createMemoryPayloadStore } from '../../src/store/memory-payload-store.js';
import { payCallId, useHttpTestApi } from '../http/http-test-kit.js';
import { bySize, reliabilitySeed, reliabilitySize, writeResults } from './reliability-kit.js';

const size = bySize({ small: { requests: 800 }, large: { requests: 5_000 } });
const maxBodyBytes = 16 * 1024;
const seed = reliabilitySeed();
// With a payload store, as a deployment serving stored outputs runs it, so the fuzz reaches that route's handler.
const { keys, api } = useHttpTestApi({ maxBodyBytes, payloadStore: createMemoryPayloadStore() });
let knownRunId: string;

beforeAll(async () => {
  const started = await api.request('/v1/runs', {
    method: 'POST',
    key: keys.alice,
    json: { model: 'scripted:t', prompt: 'pay B', approvalTimeout: '1h' },
  });
  knownRunId = ((await started.json()) as { runId: string }).runId;
});

const runId = fc.oneof(
  fc.constant('KNOWN'),
  fc.string({ maxLength: 300 }),
  fc.constantFrom('..', '%2e%2e', '%00', '%ZZ', 'run_x%2Fy', ' ', '\u{1F600}', 'a'.repeat(5_000)),
);
const routePath = fc.oneof(
  runId.map((id) => `/v1/runs/${id}`),
  fc
    .tuple(runId, fc.constantFrom('events', 'approve', 'reject', 'cancel', 'nope', ''))
    .map(([id, tail]) => `/v1/runs/${id}/${tail}`),
  fc.constantFrom('/v1/runs', '/v1/approvals', '/v1/openapi.json', '/healthz', '/', '/v1', '/v2/runs', '//v1/runs'),
  fc
    .tuple(fc.constantFrom('/v1/approvals', '/v1/runs/KNOWN/events'), fc.string({ maxLength: 60 }))
    .map(([base, query]) => `${base}?${query}`),
  fc.webPath(),
);
const fieldValue = fc.oneof(fc.jsonValue(), fc.string(), fc.integer(), fc.constant(null));
const jsonBody = fc
  .oneof(
    fc.record(
      {
        model: fc.oneof(fc.constant('scripted:t'), fieldValue),
        prompt: fc.oneof(fc.constant('hi'), fieldValue),
        messages: fieldValue,
        maxSteps: fc.oneof(fc.integer({ min: -5, max: 1_000 }), fieldValue),
        approvalTimeout: fc.oneof(fc.constantFrom('1s', '1h', 'soon', -1, 0), fieldValue),
        runId: fieldValue,
        tools: fieldValue,
        config: fieldValue,
        tenantId: fieldValue,
        toolCallId: fc.oneof(fc.constant(payCallId), fieldValue),
        input: fieldValue,
        reason: fieldValue,
        approver: fieldValue,
      },
      { requiredKeys: [] },
    ),
    fc.jsonValue(),
  )
  .map((value) => JSON.stringify(value));
const body = fc.oneof(
  jsonBody,
  fc.string(),
  fc.constantFrom('{', '{"model":', 'null', '[]', '\u0000', '{"a":1}{"b":2}'),
  fc
    .integer({ min: maxBodyBytes, max: 4 * maxBodyBytes })
    .map((length) => JSON.stringify({ prompt: 'x'.repeat(length) })),
);
const request = fc.record({
  method: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD'),
  path: routePath,
  key: fc.constantFrom('alice', 'bob', 'none', 'garbage'),
  contentType: fc.constantFrom(
    'application/json',
    'application/json; charset=utf-8',
    'text/plain',
    'multipart/form-data',
    undefined,
  ),
  lastEventId: fc.option(fc.oneof(fc.constantFrom('0', '1', '-1', '1e9', 'abc'), fc.string({ maxLength: 20 })), {
    nil: undefined,
  }),
  body: fc.option(body, { nil: undefined }),
});

type Sent = { status: number; problem: boolean; method: string; path: string };

type FuzzRequest = typeof request extends fc.Arbitrary<infer T> ? T : never;

async function send(input: FuzzRequest): Promise<Sent | undefined> {
  const headers: Record<string, string> = {};
  if (input.key === 'alice') headers['authorization'] = `Bearer ${keys.alice}`;
  if (input.key === 'bob') headers['x-api-key'] = keys.bob;
  if (input.key === 'garbage') headers['authorization'] = 'Bearer \u00ff\u00fe';
  if (input.contentType) headers['content-type'] = input.contentType;
  if (input.lastEventId !== undefined) headers['last-event-id'] = input.lastEventId;
  const pathname = input.path.replaceAll('KNOWN', knownRunId);
  const withBody = input.body !== undefined && input.method !== 'GET' && input.method !== 'HEAD';
  let response: Response;
  try {
    response = await fetch(`${api.url}${pathname.startsWith('/') ? '' : '/'}${pathname}`, {
      method: input.method,
      headers,
      ...(withBody ? { body: input.body } : {}),
      signal: AbortSignal.timeout(10_000),
    });
  } catch (error) {
    // A URL or header the client itself refuses never reaches the server: nothing to check.
    if (error instanceof TypeError) return undefined;
    throw error;
  }
  const type = response.headers.get('content-type') ?? '';
  if (type.startsWith('text/event-stream')) await response.body?.cancel();
  else await response.arrayBuffer();
  return {
    status: response.status,
    problem: type === 'application/problem+json',
    method: input.method,
    path: pathname,
  };
}

it(
  'answers random and malformed methods, paths, headers and bodies without a 5xx, every error as problem+json',
  async () => {
    const sent: Sent[] = [];
    let notSent = 0;
    await fc.assert(
      fc.asyncProperty(request, async (input) => {
        const outcome = await send(input);
        if (!outcome) {
          notSent += 1;
          return;
        }
        sent.push(outcome);
        expect(outcome.status, `${outcome.method} ${outcome.path}`).toBeLessThan(500);
        if (outcome.status >= 400 && outcome.method !== 'HEAD')
          expect(outcome.problem, `${outcome.method} ${outcome.path}`).toBe(true);
      }),
      { seed, numRuns: size.requests, endOnFailure: true },
    );
    const byStatus: Record<string, number> = {};
    for (const { status } of sent) byStatus[status] = (byStatus[status] ?? 0) + 1;
    await writeResults('api-fuzz', {
      seed,
      badInputsTried: sent.length,
      refusedByTheClientBeforeSending: notSent,
      byStatus,
      serverErrors: sent.filter(({ status }) => status >= 500).length,
      errorsNotProblemJson: sent.filter(({ status, problem, method }) => status >= 400 && !problem && method !== 'HEAD')
        .length,
    });
    expect(Object.keys(byStatus).length).toBeGreaterThan(3);
  },
  bySize({ small: 120_000, large: 1_800_000 }),
);

const schemathesis = path.join(homedir(), '.cache/relay-e/venv/bin/schemathesis');

// schemathesis is the large size's second opinion; the small size (CI) relies on the fast-check fuzz above, and
// vitest lists this test as skipped there.
it.skipIf(reliabilitySize !== 'large')(
  'passes schemathesis against its own OpenAPI document without a single 5xx (only with RELAY_E_RELIABILITY_SIZE=large)',
  async () => {
    if (!existsSync(schemathesis)) {
      throw new Error(
        `schemathesis is not installed at ${schemathesis}: python3 -m venv ~/.cache/relay-e/venv && ~/.cache/relay-e/venv/bin/pip install schemathesis`,
      );
    }
    // Calls waiting for a human, which the document's links from `GET /v1/approvals` lead schemathesis to decide.
    const waitingRuns = [knownRunId];
    while (waitingRuns.length < 10) {
      const started = await api.request('/v1/runs', {
        method: 'POST',
        key: keys.alice,
        json: { model: 'scripted:t', prompt: 'pay B', approvalTimeout: '1h' },
      });
      waitingRuns.push(((await started.json()) as { runId: string }).runId);
    }
    for (const runId of waitingRuns) {
      await api.waitForRun(runId, keys.alice, (run) => run.status !== 'running');
    }
    const output: string[] = [];
    const code = await new Promise<number | null>((resolve) => {
      const child = spawn(
        schemathesis,
        [
          'run',
          `${api.url}/v1/openapi.json`,
          '--header',
          `Authorization: Bearer ${keys.alice}`,
          // The promise under test; schema conformance findings are a separate matter for the API's document.
          '--checks',
          'not_a_server_error',
          '--max-examples',
          '200',
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      child.stdout.on('data', (chunk: Buffer) => output.push(chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => output.push(chunk.toString()));
      child.once('exit', resolve);
    });
    const text = output.join('');
    const decided = (await Promise.all(waitingRuns.map((runId) => api.worker.client.events(runId)))).flat();
    await writeResults('api-fuzz-schemathesis', {
      exitCode: code,
      waitingCallsOffered: waitingRuns.length,
      decisionsRecorded: {
        approved: decided.filter((event) => event.type === 'tool_approved').length,
        rejected: decided.filter((event) => event.type === 'tool_rejected').length,
      },
      summary: text.slice(-4_000),
    });
    expect(code, text.slice(-4_000)).toBe(0);
  },
  1_800_000,
);
