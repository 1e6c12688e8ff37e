import { DefaultFailureConverter } from '@temporalio/common';
import type { FailureConverter } from '@temporalio/common';

/**
 * Temporal's failure converter with each failure's message and stack trace moved into a payload (its
 * `encodedAttributes`), which the payload codec then encrypts; the failure keeps "Encoded failure" as its message.
 * Loaded by path (`failureConverterPath`): by workers and clients, and bundled into the workflow code, so it imports
 * only what the workflow sandbox may run.
 */
export const failureConverter: FailureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
