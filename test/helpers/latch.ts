/** A promise the test releases, and one that says when the code holding it has reached it. */
export function latch() {
  const controls = { release: () => {}, reached: () => {} };
  const released = new Promise<void>((resolve) => (controls.release = resolve));
  const started = new Promise<void>((resolve) => (controls.reached = resolve));
  return { released, started, release: () => controls.release(), reached: () => controls.reached() };
}
