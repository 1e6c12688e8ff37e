import { RelayError } from '../../src/shared/errors.js';

/** The `RelayError` a tool definition is refused with; fails the test when `define` accepts it. */
export function definitionRefusal(define: () => unknown): RelayError {
  try {
    define();
  } catch (error) {
    if (RelayError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('the definition was accepted');
}
