const shutdownSignals = ['SIGINT', 'SIGTERM'] as const;

/**
 * Resolves on the first SIGINT or SIGTERM so a long-running command can shut down in order; a second one
 * exits at once, for a shutdown that hangs.
 */
export function waitForShutdownSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      for (const name of shutdownSignals) process.off(name, onSignal);
      for (const name of shutdownSignals) process.once(name, () => process.exit(130));
      resolve(signal);
    };
    for (const name of shutdownSignals) process.on(name, onSignal);
  });
}
