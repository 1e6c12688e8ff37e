import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
} from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { readMarkdownBlocks } from './markdown-blocks.js';

/** Languages whose blocks the walkthrough runs. */
const shellLanguages = new Set(['sh', 'bash', 'shell']);
/** The ports `npm start` uses by default: Temporal, its Web UI and the API. */
const stackPorts = [7233, 8233, 8787];
const apiHealthUrl = 'http://127.0.0.1:8787/healthz';
const stackReadyTimeoutMs = 240_000;
const commandTimeoutMs = 120_000;
/** How long a stream (`curl -N`) is followed before it is stopped, when it printed something by then. */
const streamFollowMs = 10_000;

/** One command of the walkthrough, as run. */
export interface WalkthroughStep {
  /** `README.md:42`: where the command is written. */
  at: string;
  command: string;
  exitCode: number;
  stdout: string;
  stderr: string;
  /** True when the command is a stream that was followed for a while and then stopped, as a reader would. */
  stopped: boolean;
}

/** What {@link runWalkthrough} needs. */
export interface WalkthroughOptions {
  /** The repository whose working tree is copied, as a fresh clone would be, to run the walkthrough in. */
  root: string;
  /** The Markdown file, relative to `root`. */
  file: string;
  /** The heading of the walkthrough; its subsections belong to it. */
  section: string;
  /** Called with each step as soon as it ran. */
  onStep?: (step: WalkthroughStep) => void;
}

/**
 * Runs every shell block of one section of a Markdown file, command by command and as written, in one plain bash
 * (variables carry from one command to the next) inside a fresh copy of the working tree, with `npm start`
 * running there. A block that is just `npm start` is that stack; without one the stack is started before the
 * first block, as the README's "Two commands" do. `curl` fails on an HTTP error (`--fail-with-body`), so a 4xx
 * answer stops the walkthrough instead of scrolling by. Stops at the first command that fails.
 */
export async function runWalkthrough(options: WalkthroughOptions): Promise<WalkthroughStep[]> {
  const commands = readWalkthroughCommands(options.root, options.file, options.section);
  await assertPortsFree();
  const clone = copyWorkingTree(options.root);
  const steps: WalkthroughStep[] = [];
  let stack: ChildProcess | undefined;
  const shell = new PlainShell(clone);
  try {
    for (const command of commands) {
      if (isStackStart(command.text)) {
        stack ??= await startStack(clone);
        continue;
      }
      stack ??= await startStack(clone);
      const step = { at: command.at, command: command.text, ...(await shell.run(command.text)) };
      steps.push(step);
      options.onStep?.(step);
      if (step.exitCode !== 0) break;
    }
    return steps;
  } finally {
    shell.close();
    if (stack) await stopStack(stack);
    rmSync(clone, { recursive: true, force: true });
  }
}

/** One command and where the Markdown writes it. */
interface WrittenCommand {
  at: string;
  text: string;
}

/** The commands of the section's shell blocks: one a line, `\` continuations joined, comments and blanks left out. */
export function readWalkthroughCommands(root: string, file: string, section: string): WrittenCommand[] {
  const wanted = section.toLowerCase();
  const blocks = readMarkdownBlocks(file, readFileSync(path.join(root, file), 'utf8')).filter(
    (block) => shellLanguages.has(block.language) && block.sections.some((heading) => heading.toLowerCase() === wanted),
  );
  if (blocks.length === 0) throw new Error(`${file} has no shell block under a heading '${section}'`);
  const commands: WrittenCommand[] = [];
  for (const block of blocks) {
    const lines = block.code.split('\n');
    for (let index = 0; index < lines.length; index++) {
      const start = index;
      let text = lines[index] ?? '';
      while (text.endsWith('\\') && index + 1 < lines.length) text = `${text}\n${lines[++index] ?? ''}`;
      if (text.trim() === '' || text.trim().startsWith('#')) continue;
      commands.push({ at: `${file}:${block.line + start}`, text });
    }
  }
  return commands;
}

function isStackStart(command: string): boolean {
  return /^npm start(\s+#.*)?$/.test(command.trim());
}

function isStream(command: string): boolean {
  return /\bcurl\b[^|]*\s(-[a-zA-Z]*N[a-zA-Z]*|--no-buffer)\b/.test(command);
}

async function assertPortsFree(): Promise<void> {
  for (const port of stackPorts) {
    const busy = await new Promise<boolean>((resolve) => {
      const socket = createConnection({ host: '127.0.0.1', port });
      socket.once('connect', () => (socket.destroy(), resolve(true)));
      socket.once('error', () => resolve(false));
    });
    if (busy) {
      throw new Error(
        `port ${port} is in use: the walkthrough runs npm start on its default ports (${stackPorts.join(', ')}), ` +
          'as a reader would; stop what listens there and run it again',
      );
    }
  }
}

/**
 * Copies the tracked and untracked-but-not-ignored files (a fresh clone with this tree's changes) into a temporary
 * folder whose node_modules is a link to the repository's.
 */
function copyWorkingTree(root: string): string {
  const clone = mkdtempSync(path.join(tmpdir(), 'relay-e-walkthrough-'));
  const listed = spawnSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: root,
    encoding: 'utf8',
  });
  if (listed.status !== 0) throw new Error(`git ls-files failed: ${listed.stderr}`);
  for (const file of listed.stdout.split('\0').filter(Boolean)) {
    const source = path.join(root, file);
    if (!statSync(source, { throwIfNoEntry: false })?.isFile()) continue;
    mkdirSync(path.dirname(path.join(clone, file)), { recursive: true });
    copyFileSync(source, path.join(clone, file));
  }
  symlinkSync(realpathSync(path.join(root, 'node_modules')), path.join(clone, 'node_modules'));
  // The scripts run `npm ci` when the lock differs from the installed one's stamp (scripts/env.sh), and here it would
  // empty the shared node_modules through the link: the copy's lock must read as installed.
  for (const folder of [root, clone]) {
    const installed = spawnSync('bash', ['-c', '. scripts/env.sh && relay_e_dependencies_installed'], { cwd: folder });
    if (installed.status !== 0) throw new Error(`${folder}'s node_modules is not what package-lock.json says: npm ci`);
  }
  return clone;
}

/** `npm start` in its own process group, once its API answers. */
async function startStack(clone: string): Promise<ChildProcess> {
  const stack = spawn('npm', ['start'], { cwd: clone, env: plainEnvironment(), detached: true, stdio: 'pipe' });
  let output = '';
  stack.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  stack.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const deadline = Date.now() + stackReadyTimeoutMs;
  for (;;) {
    if (stack.exitCode !== null) throw new Error(`npm start exited ${stack.exitCode}:\n${output}`);
    if (
      await fetch(apiHealthUrl).then(
        (response) => response.ok,
        () => false,
      )
    )
      return stack;
    if (Date.now() > deadline) {
      await stopStack(stack);
      throw new Error(`npm start was not ready within ${stackReadyTimeoutMs} ms:\n${output}`);
    }
    await sleep(500);
  }
}

/** Ctrl-C to the whole group, as a terminal sends it; SIGKILL if it has not stopped within 30 s. */
async function stopStack(stack: ChildProcess): Promise<void> {
  if (stack.exitCode !== null || stack.pid === undefined) return;
  const exited = new Promise((resolve) => stack.once('exit', resolve));
  process.kill(-stack.pid, 'SIGINT');
  const timer = setTimeout(() => process.kill(-(stack.pid as number), 'SIGKILL'), 30_000);
  await exited;
  clearTimeout(timer);
}

/** The environment of a reader's fresh terminal: this one's, without the settings tests or CI point elsewhere. */
function plainEnvironment(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(
      ([name]) => !name.startsWith('RELAY_E_') && !name.startsWith('TEMPORAL_') && !name.startsWith('VITEST'),
    ),
  );
}

/** One bash that keeps its variables between commands; each command's output goes to its own files. */
class PlainShell {
  private readonly bash: ChildProcess;
  private readonly folder: string;
  private count = 0;
  private control = '';
  private waiting: (() => void) | undefined;

  constructor(cwd: string) {
    this.folder = mkdtempSync(path.join(tmpdir(), 'relay-e-walkthrough-shell-'));
    this.bash = spawn('bash', ['--noprofile', '--norc'], {
      cwd,
      env: plainEnvironment(),
      stdio: 'pipe',
      detached: true,
    });
    this.bash.stdout?.on('data', (chunk: Buffer) => {
      this.control += chunk.toString();
      this.waiting?.();
    });
    // A 4xx or 5xx answer is a failed step, with the problem document printed.
    this.bash.stdin?.write('curl() { command curl --fail-with-body --show-error "$@"; }\n');
  }

  async run(command: string): Promise<Omit<WalkthroughStep, 'at' | 'command'>> {
    const index = ++this.count;
    const out = path.join(this.folder, `${index}.out`);
    const err = path.join(this.folder, `${index}.err`);
    const marker = `__walkthrough_${index}_status__`;
    const stream = isStream(command);
    const script = stream
      ? `( ${command}\n) >'${out}' 2>'${err}' &\nwalkthrough_stream=$!\n` +
        `for _ in $(seq ${streamFollowMs / 100}); do kill -0 $walkthrough_stream 2>/dev/null || break; sleep 0.1; done\n` +
        `if kill -0 $walkthrough_stream 2>/dev/null; then pkill -P $walkthrough_stream; kill $walkthrough_stream; ` +
        `wait $walkthrough_stream; echo "${marker} stopped"; else wait $walkthrough_stream; echo "${marker} $?"; fi\n`
      : `{ ${command}\n} >'${out}' 2>'${err}' </dev/null\necho "${marker} $?"\n`;
    this.bash.stdin?.write(script);
    const status = await this.waitFor(new RegExp(`${marker} (\\w+)`), command);
    const stdout = readFileSync(out, 'utf8');
    const stderr = readFileSync(err, 'utf8');
    if (status === 'stopped') {
      return { exitCode: stdout.trim() === '' ? 1 : 0, stdout, stderr, stopped: true };
    }
    return { exitCode: Number(status), stdout, stderr, stopped: false };
  }

  private async waitFor(pattern: RegExp, command: string): Promise<string> {
    const deadline = Date.now() + commandTimeoutMs;
    for (;;) {
      const match = pattern.exec(this.control);
      if (match) {
        this.control = this.control.slice(match.index + match[0].length);
        return match[1] ?? '';
      }
      if (Date.now() > deadline) throw new Error(`'${command}' did not finish within ${commandTimeoutMs} ms`);
      await new Promise<void>((resolve) => {
        this.waiting = resolve;
        setTimeout(resolve, 200);
      });
    }
  }

  /** Ends the shell and whatever it still runs (a command that hung). */
  close(): void {
    this.bash.stdin?.end();
    if (this.bash.pid !== undefined && this.bash.exitCode === null) process.kill(-this.bash.pid, 'SIGKILL');
    rmSync(this.folder, { recursive: true, force: true });
  }
}
