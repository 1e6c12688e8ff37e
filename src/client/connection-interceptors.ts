import { InterceptingCall, Metadata, status } from '@grpc/grpc-js';
import type { Interceptor, InterceptingListener } from '@grpc/grpc-js';
import { defaultGrpcRetryOptions, makeGrpcRetryInterceptor } from '@temporalio/client';
import type { BackoffOptions } from '@temporalio/client';

/**
 * The interceptors a connection `RelayClient.connect` opens calls through: the SDK's retries, as `Connection.connect`
 * has by default (with `retry`'s backoff, where given), then {@link endCallsOnClosedChannel} under them.
 */
export function relayConnectionInterceptors(retry: Partial<BackoffOptions> = {}): Interceptor[] {
  return [makeGrpcRetryInterceptor(defaultGrpcRetryOptions(retry)), endCallsOnClosedChannel];
}

/**
 * Ends a call made on a closed connection with CANCELLED. The SDK's retry interceptor makes its next attempt from a
 * timer, and a channel closed meanwhile throws there, where nothing catches it: the process would crash (a client
 * closed while Temporal is down and a call backs off, such as the API shutting down during an outage).
 */
const endCallsOnClosedChannel: Interceptor = (options, nextCall) => {
  try {
    return new InterceptingCall(nextCall(options));
  } catch (error) {
    if (!(error instanceof Error && error.message === 'Channel has been shut down')) throw error;
    return new InterceptingCall(new ClosedChannelCall());
  }
};

/** What grpc-js calls beneath an interceptor (the interface is not exported by name). */
type UnderlyingCall = ConstructorParameters<typeof InterceptingCall>[0];

/** A unary call that ends, once started, as grpc-js ends one: a (null) message, then its status. */
class ClosedChannelCall implements UnderlyingCall {
  start(_metadata: Metadata, listener?: Partial<InterceptingListener>): void {
    setImmediate(() => {
      listener?.onReceiveMessage?.(null);
      listener?.onReceiveStatus?.({
        code: status.CANCELLED,
        details: 'the connection to Temporal was closed',
        metadata: new Metadata(),
      });
    });
  }

  cancelWithStatus(): void {}
  getPeer(): string {
    return '';
  }
  sendMessageWithContext(): void {}
  sendMessage(): void {}
  startRead(): void {}
  halfClose(): void {}
  getAuthContext(): null {
    return null;
  }
}
