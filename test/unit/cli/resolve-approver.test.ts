import { describe, expect, it } from 'vitest';
import { CliError } from '../../../src/cli/cli-error.js';
import { resolveApprover } from '../../../src/cli/resolve-approver.js';

const accountName = () => 'dana';
const noAccount = () => {
  throw new Error('uid 1234 has no passwd entry');
};

describe('the approver recorded with a decision made from the CLI', () => {
  it('is --approver when given, whatever $USER says', () => {
    expect(resolveApprover('sam', { USER: 'dana' }, accountName)).toBe('sam');
  });

  it('is $USER without --approver', () => {
    expect(resolveApprover(undefined, { USER: 'alex' }, accountName)).toBe('alex');
  });

  it("is the OS account's name when $USER is unset or empty", () => {
    expect(resolveApprover(undefined, {}, accountName)).toBe('dana');
    expect(resolveApprover(undefined, { USER: '' }, accountName)).toBe('dana');
  });

  it('is a usage error that names --approver when neither is known, never a made-up name', () => {
    expect(() => resolveApprover(undefined, {}, noAccount)).toThrow(CliError);
    expect(() => resolveApprover(undefined, {}, noAccount)).toThrow(/pass --approver NAME/);
  });
});
