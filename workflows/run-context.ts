import type { CancellationScope } from '@temporalio/workflow';
import type { RunNotices } from './approval-notices.js';
import type { ModelContextTracker } from './model-context.js';
import type { RunPatches } from './run-patches.js';
import type { RunState } from './run-state.js';
import type { ToolCallValidator } from './tool-call-validator.js';

/** What every step of one run's workflow shares. */
export interface RunContext {
  run: RunState;
  /** False for runs started before the exact identity and limit rules: they replay with the old ones. */
  exact: boolean;
  /** The patches the run asks about after it has started. */
  patches: RunPatches;
  /** Checks calls against the catalog the run snapshotted (empty until it has). */
  validator: ToolCallValidator;
  approvalTimeoutMs: number;
  /** What the model calls send by reference; absent for runs started before they did, which send everything. */
  modelContext?: ModelContextTracker;
  /** True until the run's first model call brings its catalog (rule `catalog-in-first-model-call`). */
  awaitsCatalog?: boolean;
  /** How many `decision_ignored` events this execution has recorded (ignored-decisions.ts bounds them). */
  ignoredDecisionsRecorded: number;
  /**
   * The signalled decisions a clock activity is dating (rule decision-time-fixed-before-taken): a closing run waits
   * for them, so each is taken or recorded as ignored before its end (see decisionsBeingDated).
   */
  datingDecisions: Set<Promise<void>>;
  /** The approval notices sent and not yet ended (approval-notices.ts): the run waits for them before it ends. */
  notices: RunNotices;
  /**
   * When the current step has several calls (a step's only call leaves it undefined): the moment every one of them has
   * ended, however it ended, and the scope they run in. A cancelled run waits for them (see recordCancellation); a
   * failing run cancels the scope, then waits for them (see recordFailure).
   */
  callsOfStep?: { settled: Promise<unknown>; scope: CancellationScope };
}
