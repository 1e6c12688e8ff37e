/**
 * How a benchmark talks to a variant living in its own process (its own worker, or the peer with its own
 * Temporal SDK version): one JSON command a line on stdin, one JSON answer a line on stdout. Node built-ins
 * only, since the peer's package imports it too.
 */
import { spawn } from 'node:child_process';
import type { ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { createInterface } from 'node:readline';

/** Start `runs` agent runs of `steps` tool steps, at most `concurrency` at once, and wait for all to end. */
export interface RunCommand {
  type: 'run';
  steps: number;
  runs: number;
  concurrency: number;
}

/** Start `runs` runs whose one tool needs approval, one at a time; approve each once it waits. */
export interface ApproveCommand {
  type: 'approve';
  runs: number;
}

export type VariantCommand = RunCommand | ApproveCommand;

export interface RunAnswer {
  /** Workflow ids, for the benchmark to read the histories; empty for the in-process loop. */
  ids: string[];
  /** First start to last result. */
  wallMs: number;
  /** Each run, start to result. */
  runMs: number[];
  /** Each step, measured in the process (the in-process loop only; the others are read from history). */
  stepMs?: number[];
  /** When the variant process served the command, set by {@link serveVariant}. */
  window?: CommandWindow;
}

/**
 * A command's span in microseconds on the process's monotonic clock, the clock V8 stamps CPU-profile samples with
 * (both read CLOCK_MONOTONIC), so a profile's samples can be cut to the commands that were measured.
 */
export interface CommandWindow {
  startMicros: number;
  endMicros: number;
}

const monotonicMicros = () => Number(process.hrtime.bigint() / 1000n);

export interface ApprovalSample {
  id: string;
  /** `Date.now()` just before the decision was sent. */
  sentAtMs: number;
  /** `Date.now()` when the decision call returned. */
  returnedAtMs: number;
}

export interface ApproveAnswer {
  samples: ApprovalSample[];
}

/** Serves commands from stdin until it closes; `handle` answers each, in order. */
export async function serveVariant(handle: (command: VariantCommand) => Promise<unknown>): Promise<void> {
  const lines = createInterface({ input: process.stdin });
  for await (const line of lines) {
    if (line.trim() === '') continue;
    try {
      const startMicros = monotonicMicros();
      const answer = await handle(JSON.parse(line) as VariantCommand);
      const window: CommandWindow = { startMicros, endMicros: monotonicMicros() };
      process.stdout.write(`${JSON.stringify({ ok: true, answer: { ...(answer as object), window } })}\n`);
    } catch (error) {
      const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
      process.stdout.write(`${JSON.stringify({ ok: false, error: message })}\n`);
    }
  }
}

/** A variant in a child process, asked one command at a time. */
export class VariantProcess {
  private readonly child: ChildProcessByStdio<Writable, Readable, null>;
  private readonly answers: AsyncIterator<string>;
  private readonly exited: Promise<void>;

  constructor(
    readonly name: string,
    command: { args: string[]; cwd?: string },
  ) {
    this.child = spawn(process.execPath, command.args, {
      cwd: command.cwd ?? process.cwd(),
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    this.answers = createInterface({ input: this.child.stdout })[Symbol.asyncIterator]();
    this.exited = new Promise((resolve) => this.child.once('exit', () => resolve()));
  }

  /** The variant's process id, for reading the CPU it uses. */
  get pid(): number {
    if (this.child.pid === undefined) throw new Error(`Variant ${this.name} has no process`);
    return this.child.pid;
  }

  run(command: Omit<RunCommand, 'type'>): Promise<RunAnswer> {
    return this.ask<RunAnswer>({ type: 'run', ...command });
  }

  approve(runs: number): Promise<ApproveAnswer> {
    return this.ask<ApproveAnswer>({ type: 'approve', runs });
  }

  /** Closes stdin, which ends the variant's serve loop, and waits for it to exit. */
  async stop(): Promise<void> {
    this.child.stdin.end();
    await this.exited;
  }

  private async ask<T>(command: VariantCommand): Promise<T> {
    this.child.stdin.write(`${JSON.stringify(command)}\n`);
    let next = await this.answers.next();
    // A library may still print to stdout; only lines of the protocol are answers.
    while (!next.done && !next.value.startsWith('{"ok":')) {
      process.stderr.write(`${this.name}: ${next.value}\n`);
      next = await this.answers.next();
    }
    if (next.done) throw new Error(`Variant ${this.name} exited before answering ${command.type}`);
    const reply = JSON.parse(next.value) as { ok: true; answer: T } | { ok: false; error: string };
    if (!reply.ok) throw new Error(`Variant ${this.name} failed ${command.type}: ${reply.error}`);
    return reply.answer;
  }
}
