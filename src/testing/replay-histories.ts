import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { gunzip, gzip } from 'node:zlib';
import type { WorkflowHandle } from '@temporalio/client';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import type { History, ReplayWorkerOptions, WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { readHistory } from '../client/read-history.js';
import { RelayError } from '../shared/errors.js';
import { historyFromJson, historyToJson } from './history-json.js';
import { relayWorkflowBundle } from './relay-workflow-bundle.js';

/** A recorded history read from a file. */
export interface HistoryFixture {
  /** Path of the JSON file (`.json`, or `.json.gz` gzipped), relative to the directory it was loaded from. */
  readonly file: string;
  /** The history, parsed from proto JSON (`temporal workflow show --output json` or {@link recordHistory}). */
  readonly history: History;
}

/** One history that did not replay, with the file it came from. */
export interface HistoryReplayFailure {
  readonly file: string;
  /** Usually a `DeterminismViolationError` (from `@temporalio/workflow`) or a `ReplayError`. */
  readonly error: Error;
}

/** Thrown by {@link replayHistories} when any history fails to replay; names every failing file. */
export class HistoryReplayError extends Error {
  override readonly name = 'HistoryReplayError';

  constructor(readonly failures: readonly HistoryReplayFailure[]) {
    super(
      `${failures.length} recorded ${failures.length === 1 ? 'history does' : 'histories do'} not replay:\n` +
        failures.map(({ file, error }) => `  ${file}: ${error.name}: ${error.message}`).join('\n'),
      { cause: failures[0]?.error },
    );
  }
}

const gzipped = promisify(gzip);
const gunzipped = promisify(gunzip);

/** Whether a history file is kept gzipped: a long run's payloads (repeated text, base64) shrink many times over. */
const isGzipped = (file: string) => file.endsWith('.json.gz');
/** The files {@link loadHistories} reads, and so the only ones {@link recordHistory} writes. */
const isHistoryFile = (file: string) => file.endsWith('.json') || isGzipped(file);

/**
 * Writes a workflow's history to `file` as indented proto JSON, the format {@link replayHistories} reads (gzipped
 * when `file` ends in `.json.gz`): the execution the handle names, read in pages small enough for gRPC, so a history
 * of any size records. Any other name is refused: no replay would ever read it.
 */
export async function recordHistory(
  handle: Pick<WorkflowHandle, 'client' | 'workflowId' | 'describe'>,
  file: string,
): Promise<void> {
  if (!isHistoryFile(file)) {
    throw new RelayError(
      'invalid_input',
      `recordHistory writes *.json or *.json.gz files, which replays read; not ${file}`,
    );
  }
  const { runId } = await handle.describe();
  const history = await readHistory(handle.client, handle.workflowId, { executionRunId: runId });
  const json = historyToJson(history);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, isGzipped(file) ? await gzipped(json) : json);
}

/**
 * Loads every `*.json` and gzipped `*.json.gz` history below `directory` (recursively, sorted by path); throws if
 * there is none.
 */
export async function loadHistories(directory: string): Promise<HistoryFixture[]> {
  const entries = await readdir(directory, { recursive: true, withFileTypes: true });
  const files = entries
    .filter((entry) => entry.isFile() && isHistoryFile(entry.name))
    .map((entry) => path.relative(directory, path.join(entry.parentPath, entry.name)))
    .sort();
  // An empty directory would make a replay test pass while checking nothing.
  if (files.length === 0) throw new Error(`No recorded histories (*.json, *.json.gz) in ${directory}`);
  return Promise.all(
    files.map(async (file) => ({ file, history: parseHistory(file, await readText(directory, file)) })),
  );
}

async function readText(directory: string, file: string): Promise<string> {
  const content = await readFile(path.join(directory, file));
  if (!isGzipped(file)) return content.toString('utf8');
  const text = await gunzipped(content).catch((error: unknown) => {
    throw new Error(`${file} cannot be gunzipped: ${String(error)}`, { cause: error });
  });
  return text.toString('utf8');
}

/** Options of {@link replayHistories}: replay worker options, and the workflow code when it is not Relay-E's. */
export type ReplayHistoriesOptions = Omit<ReplayWorkerOptions, 'workflowsPath' | 'workflowBundle'> & {
  /**
   * The workflows to replay against, as a path to bundle.
   * @default Relay-E's agent workflow, bundled exactly as `createWorker` bundles it
   */
  workflowsPath?: string;
  /** A bundle to replay against instead of bundling (`bundleRelayWorkflows()`), shared by several replays. */
  workflowBundle?: WorkflowBundleWithSourceMap;
};

/**
 * Replays every history below `directory` against the current workflow code and throws a {@link HistoryReplayError}
 * naming each file whose history that code no longer reproduces: a determinism check for a corpus of recorded runs.
 * Returns the files it replayed.
 */
export async function replayHistories(directory: string, options: ReplayHistoriesOptions = {}): Promise<string[]> {
  const fixtures = await loadHistories(directory);
  const { workflowsPath, workflowBundle, ...replayOptions } = options;
  const results = Worker.runReplayHistories(
    { ...replayOptions, workflowBundle: workflowBundle ?? (await bundleFor(workflowsPath)) },
    fixtures.map(({ file, history }) => ({ workflowId: file, history })),
  );
  const failures: HistoryReplayFailure[] = [];
  // Results come back in input order and carry the workflow id set to the file name.
  for await (const { workflowId, error } of results) {
    if (error !== undefined) failures.push({ file: workflowId, error });
  }
  if (failures.length > 0) throw new HistoryReplayError(failures);
  return fixtures.map(({ file }) => file);
}

function bundleFor(workflowsPath: string | undefined): Promise<WorkflowBundleWithSourceMap> {
  return workflowsPath === undefined ? relayWorkflowBundle() : bundleWorkflowCode({ workflowsPath });
}

function parseHistory(file: string, text: string): History {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new Error(`${file} is not valid JSON`, { cause: error });
  }
  if (!hasEvents(json)) throw new Error(`${file} is not a workflow history: it has no "events" array`);
  try {
    return historyFromJson(json);
  } catch (error) {
    throw new Error(`${file} is not a workflow history: ${String(error)}`, { cause: error });
  }
}

function hasEvents(value: unknown): value is { events: unknown[] } {
  return (
    typeof value === 'object' &&
    value !== null &&
    Array.isArray((value as { events?: unknown }).events) &&
    (value as { events: unknown[] }).events.length > 0
  );
}
