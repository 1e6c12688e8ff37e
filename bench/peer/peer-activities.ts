/** The peer's tool activity: the same addition as every variant. */
export const peerActivities = {
  async addNumbers(input: { a: number; b: number }) {
    return { result: input.a + input.b };
  },
};
