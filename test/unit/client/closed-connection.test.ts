import { InterceptingCall } from '@grpc/grpc-js';
import { Connection } from '@temporalio/client';
import type { Interceptor as GrpcInterceptor } from '@grpc/grpc-js';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { relayConnectionInterceptors } from '../../../src/client/connection-interceptors.js';
import { freePort } from '../../helpers/free-port.js';

describe('a Relay-E connection closed while a call backs off', () => {
  it('ends the call with CANCELLED where the retry timer would throw out of the process', async () => {
    // Nothing listens at the address, so every attempt fails UNAVAILABLE and the SDK's retries back off between them.
    const address = `127.0.0.1:${await freePort()}`;
    const [retries, ...underRetries] = relayConnectionInterceptors() as [GrpcInterceptor, ...GrpcInterceptor[]];
    const attemptStatuses: number[] = [];
    // Between the retries and what they call: the first failed attempt closes the connection, so the retry's next
    // attempt, made from its timer, meets a closed channel.
    const closeAfterFirstAttempt: GrpcInterceptor = (options, nextCall) =>
      new InterceptingCall(nextCall(options), {
        start(metadata, listener, next) {
          next(metadata, {
            onReceiveStatus(status, nextStatus) {
              attemptStatuses.push(status.code);
              if (attemptStatuses.length === 1) void connection.close();
              nextStatus(status);
            },
          });
        },
      });
    const connection = Connection.lazy({ address, interceptors: [retries, closeAfterFirstAttempt, ...underRetries] });

    const call = connection.workflowService.describeNamespace({ namespace: 'default' });
    const outcome = await Promise.race([
      call.then(
        () => 'answered',
        (error: unknown) => error,
      ),
      sleep(3_000, 'still pending after 3 s'),
    ]);

    expect(outcome).toMatchObject({ code: 1, details: 'the connection to Temporal was closed' });
    expect(attemptStatuses).toEqual([14, 1]);
  });
});
