import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import type { History, ReplayWorkerOptions, WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { historyFromJson, historyToJson } from './history-json.js';
import { bundleWorkflows, quietenWorkerRuntime } from './temporal-test-env.js';

/** A recorded history read from a fixture file. */
export interface HistoryFixture {
  /** Path of the JSON file, relative to the directory it was loaded from. */
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

/** Error thrown by {@link replayHistoryFixtures} when any history fails to replay; names every failing file. */
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

/** Loads every `*.json` history below `directory` (recursively, sorted by path); throws if there is none. */
export async function loadHistoryFixtures(directory: string): Promise<HistoryFixture[]> {
  const entries = await readdir(directory, { recursive: true, withFileTypes: true });
  const files = entries
    .filter((entry) => entry.isFile() && entry.name.endsWith('.json'))
    .map((entry) => path.relative(directory, path.join(entry.parentPath, entry.name)))
    .sort();
  // An empty fixture directory would make a replay suite pass while checking nothing.
  if (files.length === 0) throw new Error(`No recorded histories (*.json) in ${directory}`);
  return Promise.all(
    files.map(async (file) => {
      const text = await readFile(path.join(directory, file), 'utf8');
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch (error) {
        throw new Error(`${file} is not valid JSON`, { cause: error });
      }
      if (!hasEvents(json)) throw new Error(`${file} is not a workflow history: it has no "events" array`);
      try {
        return { file, history: historyFromJson(json) };
      } catch (error) {
        throw new Error(`${file} is not a workflow history: ${String(error)}`, { cause: error });
      }
    }),
  );
}

/** Options of {@link replayHistoryFixtures}: replay worker options plus the workflow code to check. */
export type ReplayFixturesOptions = Omit<ReplayWorkerOptions, 'workflowsPath' | 'workflowBundle'> &
  (
    | { workflowsPath: string; workflowBundle?: never }
    | { workflowBundle: WorkflowBundleWithSourceMap; workflowsPath?: never }
  );

/**
 * Replays every history below `directory` against the given workflow code and throws a
 * {@link HistoryReplayError} naming each file whose history the code no longer reproduces.
 * Returns the files that were replayed.
 */
export async function replayHistoryFixtures(directory: string, options: ReplayFixturesOptions): Promise<string[]> {
  const fixtures = await loadHistoryFixtures(directory);
  const { workflowsPath, workflowBundle, ...replayOptions } = options;
  quietenWorkerRuntime();
  const results = Worker.runReplayHistories(
    { ...replayOptions, workflowBundle: workflowBundle ?? (await bundleWorkflows(workflowsPath)) },
    fixtures.map(({ file, history }) => ({ workflowId: file, history })),
  );
  const failures: HistoryReplayFailure[] = [];
  // Results come back in input order and carry the workflow id we set to the file name.
  for await (const { workflowId, error } of results) {
    if (error !== undefined) failures.push({ file: workflowId, error });
  }
  if (failures.length > 0) throw new HistoryReplayError(failures);
  return fixtures.map(({ file }) => file);
}

/** True when RELAY_E_RECORD_HISTORIES=1: tests then rewrite their history fixtures instead of only checking them. */
export function isRecordingHistories(): boolean {
  return process.env['RELAY_E_RECORD_HISTORIES'] === '1';
}

/** Writes the history of a finished workflow to `file` as indented proto JSON, the format the replay helpers load. */
export async function recordHistory(handle: Pick<WorkflowHandle, 'fetchHistory'>, file: string): Promise<void> {
  const history = await handle.fetchHistory();
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, historyToJson(history));
}

/** Records the workflow's history into `file` only when {@link isRecordingHistories}; returns whether it did. */
export async function recordHistoryIfRequested(
  handle: Pick<WorkflowHandle, 'fetchHistory'>,
  file: string,
): Promise<boolean> {
  if (!isRecordingHistories()) return false;
  await recordHistory(handle, file);
  return true;
}

function hasEvents(value: unknown): value is { events: unknown[] } {
  return (
    typeof value === 'object' &&
    value !== null &&
    Array.isArray((value as { events?: unknown }).events) &&
    (value as { events: unknown[] }).events.length > 0
  );
}
