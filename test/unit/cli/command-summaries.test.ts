import { expect, it } from 'vitest';
import { approvalsCommand } from '../../../src/cli/approvals-command.js';
import { commandSummaries } from '../../../src/cli/command-summaries.js';
import { codecServerCommand } from '../../../src/cli/codec-server-command.js';
import { approveCommand, rejectCommand } from '../../../src/cli/decision-command.js';
import { devCommand } from '../../../src/cli/dev-command.js';
import { inspectCommand } from '../../../src/cli/inspect-command.js';
import { runCommand } from '../../../src/cli/run-command.js';
import { runsCommand } from '../../../src/cli/runs-command.js';
import { serveCommand } from '../../../src/cli/serve-command.js';
import { toolsCommand } from '../../../src/cli/tools-command.js';
import { workerCommand } from '../../../src/cli/worker-command.js';

it('lists in relay-e --help the very summary each command has, for every command', () => {
  const commands = [
    devCommand,
    runCommand,
    approveCommand,
    rejectCommand,
    approvalsCommand,
    runsCommand,
    inspectCommand,
    workerCommand,
    serveCommand,
    codecServerCommand,
    toolsCommand,
  ];
  expect(Object.fromEntries(commands.map((command) => [command.name, command.summary]))).toEqual(commandSummaries);
});
