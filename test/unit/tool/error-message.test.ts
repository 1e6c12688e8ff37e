import { describe, expect, it } from 'vitest';
import { errorMessage } from '../../../src/shared/error-message.js';

describe('errorMessage', () => {
  it('reads an AggregateError without a message of its own as its errors’ messages, each once', () => {
    const refused = new AggregateError(
      [
        new Error('connect ECONNREFUSED ::1:5432'),
        new Error('connect ECONNREFUSED 127.0.0.1:5432'),
        new Error('connect ECONNREFUSED 127.0.0.1:5432'),
      ],
      '',
    );

    expect(errorMessage(refused)).toBe('connect ECONNREFUSED ::1:5432; connect ECONNREFUSED 127.0.0.1:5432');
  });

  it('keeps an AggregateError’s own message, an Error’s message or name, a string, and JSON for the rest', () => {
    expect(errorMessage(new AggregateError([new Error('inner')], 'all failed'))).toBe('all failed');
    expect(errorMessage(new TypeError(''))).toBe('TypeError');
    expect(errorMessage('plain')).toBe('plain');
    expect(errorMessage({ code: 42 })).toBe('{"code":42}');
  });
});
