import { setTimeout as sleep } from 'node:timers/promises';
import { isGrpcDeadlineError } from '@temporalio/client';
import type { RelayClient } from '../client/relay-client.js';
import { errorMessage } from '../shared/error-message.js';
import { temporalUnavailable, temporalUnavailableError } from './http-error.js';
import type { ApiLogger } from './error-handlers.js';
import type { HttpError } from './http-error.js';
import { isTemporalUnavailable, missingNamespaceOf } from '../client/temporal-unavailable.js';

/**
 * Asks Temporal, on the client's connection, to describe the client's namespace within `timeoutMs`; rejects with the
 * SDK's error when it does not (gRPC NOT_FOUND for a namespace it does not have, UNAVAILABLE for a server it cannot
 * reach), or with a {@link NamespaceCheckTimeoutError} once `timeoutMs` has passed without an answer.
 */
export async function describeClientNamespace(client: RelayClient, timeoutMs: number): Promise<void> {
  const { connection, options } = client.temporal;
  const deadline = Date.now() + timeoutMs;
  const described = connection.withDeadline(deadline, () =>
    connection.workflowService.describeNamespace({ namespace: options.namespace }),
  );
  // The deadline alone does not bound the answer: the connection's retry interceptor backs off past it (and an abort
  // does not stop it either), so the call is left to end on its own, once the interceptor's current backoff is over.
  const timer = new AbortController();
  const timedOut = sleep(timeoutMs, undefined, { signal: timer.signal }).then(() => {
    throw new NamespaceCheckTimeoutError(timeoutMs);
  });
  try {
    await Promise.race([described, timedOut]);
  } catch (error) {
    if (isGrpcDeadlineError(error)) throw new NamespaceCheckTimeoutError(timeoutMs, { cause: error });
    throw error;
  } finally {
    timer.abort();
    described.catch(() => {});
    timedOut.catch(() => {});
  }
}

/** Temporal did not describe the namespace in the time given: a server too slow or one that cannot be reached. */
export class NamespaceCheckTimeoutError extends Error {
  override readonly name = 'NamespaceCheckTimeoutError';

  constructor(
    readonly timeoutMs: number,
    options: { cause?: unknown } = {},
  ) {
    super(`Temporal did not describe the namespace within ${timeoutMs} ms`, options);
  }
}

export interface TemporalReadinessOptions {
  /** How long one check waits for Temporal to describe the namespace. @default 2_000 */
  timeoutMs?: number;
  /** How long an answer serves further checks, so a load balancer's probes cost Temporal one call a period. @default 1_000 */
  reuseMs?: number;
  /** Told when readiness changes (a warning with the cause when it is lost), not at every probe. @default console */
  logger?: ApiLogger;
}

/**
 * Whether the API's Temporal connection can describe its client's namespace: undefined when it can, else the 503
 * `temporal_unavailable` saying why. Checks made while one is asked, or within `reuseMs` of its answer, share it.
 */
export class TemporalReadiness {
  private readonly client: RelayClient;
  private readonly timeoutMs: number;
  private readonly reuseMs: number;
  private readonly logger: ApiLogger;
  private latest: { answer: Promise<HttpError | undefined>; reusableUntil: number } | undefined;
  private wasReady = true;

  constructor(client: RelayClient, options: TemporalReadinessOptions = {}) {
    this.client = client;
    this.timeoutMs = options.timeoutMs ?? 2_000;
    this.reuseMs = options.reuseMs ?? 1_000;
    this.logger = options.logger ?? console;
  }

  check(): Promise<HttpError | undefined> {
    if (this.latest && Date.now() < this.latest.reusableUntil) return this.latest.answer;
    const latest = { answer: this.describeNamespace(), reusableUntil: Number.POSITIVE_INFINITY };
    this.latest = latest;
    void latest.answer.then(() => {
      latest.reusableUntil = Date.now() + this.reuseMs;
    });
    return latest.answer;
  }

  private async describeNamespace(): Promise<HttpError | undefined> {
    try {
      await describeClientNamespace(this.client, this.timeoutMs);
      if (!this.wasReady) this.logger.warn?.('Relay-E API: Temporal answers again; /readyz is ready');
      this.wasReady = true;
      return undefined;
    } catch (error) {
      // The keyless answer says what failed, not the server's words; the log has them, once per change.
      if (this.wasReady) this.logger.warn?.(`Relay-E API: /readyz is not ready: ${errorMessage(error)}`);
      this.wasReady = false;
      return this.explain(error, this.client.temporal.options.namespace);
    }
  }

  /** Why the namespace could not be described: a missing one as every route says it, else what failed, briefly. */
  private explain(error: unknown, namespace: string): HttpError {
    const asEveryRouteSays = temporalUnavailableError(error);
    if (asEveryRouteSays && missingNamespaceOf(error) !== undefined) return asEveryRouteSays;
    const why =
      error instanceof NamespaceCheckTimeoutError
        ? `did not answer within ${this.timeoutMs} ms`
        : isTemporalUnavailable(error)
          ? 'could not be reached'
          : "refused the check (its reason is in the API's log)";
    return temporalUnavailable(`Temporal ${why} (asked to describe namespace '${namespace}')`, error);
  }
}
