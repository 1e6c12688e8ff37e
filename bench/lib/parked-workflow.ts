import { condition, defineSignal, setHandler } from '@temporalio/workflow';

export const releaseSignal = defineSignal('release');

/** The smallest workflow that parks like a run awaiting approval: the baseline for memory per cached run. */
export async function parkedWorkflow(): Promise<void> {
  let released = false;
  setHandler(releaseSignal, () => {
    released = true;
  });
  await condition(() => released, '1h');
}
