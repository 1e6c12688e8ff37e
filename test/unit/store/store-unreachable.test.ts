import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { RelayError } from '../../../src/shared/errors.js';
import { PostgresConnectTimeoutError } from '../../../src/store/postgres-payload-store.js';
import { isPayloadStoreUnreachable } from '../../../src/store/store-unreachable.js';

/** An error as Node's sockets and DNS lookups fail with: a message and a `code`. */
function systemError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}

/** An error as PostgreSQL answers it: pg's `DatabaseError` with the SQLSTATE as its `code`. */
function databaseError(code: string, message: string): pg.DatabaseError {
  const error = new pg.DatabaseError(message, message.length, 'error');
  error.code = code;
  return error;
}

describe('isPayloadStoreUnreachable', () => {
  it.each([
    ['nothing listens (ECONNREFUSED)', systemError('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432')],
    ['the name does not resolve (ENOTFOUND)', systemError('ENOTFOUND', 'getaddrinfo ENOTFOUND db.internal')],
    ['a connection exception (SQLSTATE 08006)', databaseError('08006', 'connection failure')],
    ['a server still starting up (SQLSTATE 57P03)', databaseError('57P03', 'the database system is starting up')],
    ['no connection in time (PostgresConnectTimeoutError, ETIMEDOUT)', new PostgresConnectTimeoutError(300)],
    ['a connection the server dropped under a query', new Error('Connection terminated unexpectedly')],
    [
      'each address of a name refused (an AggregateError without a code of its own)',
      new AggregateError([systemError('ECONNREFUSED', 'connect ECONNREFUSED ::1:5432')], ''),
    ],
    [
      'an error caused by one that is',
      new Error('reading the payload failed', { cause: systemError('EHOSTUNREACH', 'connect EHOSTUNREACH') }),
    ],
  ])('counts %s as unreachable, worth another attempt', (_, error) => {
    expect(isPayloadStoreUnreachable(error)).toBe(true);
  });

  it.each([
    ['a missing privilege (SQLSTATE 42501)', databaseError('42501', 'permission denied for schema public')],
    ['a refused password (SQLSTATE 28P01)', databaseError('28P01', 'password authentication failed for user "u"')],
    ['a payload the store lacks', new RelayError('payload_not_found', "Run 'run-1' has no stored payload")],
    ['an error without a code', new Error('something else broke')],
    ['a thrown value that is no object', 'ECONNREFUSED'],
    ['a thrown null', null],
    ['an error caused by a refusal', new Error('storing failed', { cause: databaseError('28P01', 'password failed') })],
  ])('does not count %s as unreachable', (_, error) => {
    expect(isPayloadStoreUnreachable(error)).toBe(false);
  });
});
