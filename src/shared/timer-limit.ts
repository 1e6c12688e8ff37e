/** The longest delay Node's timers take (2^31 - 1 ms, about 24.8 days): a longer one fires at once. */
export const longestTimerDelayMs = 2_147_483_647;
