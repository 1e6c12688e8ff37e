import { agentTurn } from './agent-script.js';

/** The bare floor's activities: the scripted turn and the addition, nothing around them. */
export const bareAgentActivities = {
  async modelTurn(step: number, steps: number) {
    return agentTurn(step, steps);
  },
  async addNumbers(input: { a: number; b: number }) {
    return { result: input.a + input.b };
  },
};
