import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { httpOnlyErrorCodes, toHttpError } from '../../../src/http/http-error.js';
import { RelayError, errorCodes } from '../../../src/shared/errors.js';

const httpApiDoc = readFileSync(path.join(import.meta.dirname, '../../../docs/http-api.md'), 'utf8');
/** The rows of the error table in docs/http-api.md: code and status. */
const documented = new Map(
  [...httpApiDoc.matchAll(/^\| `([a-z_]+)` +\| (\d{3}) +\|/gm)].map(([, code, status]) => [code, Number(status)]),
);

describe('the error table in docs/http-api.md', () => {
  it('names every code the engine and the HTTP layer can answer, and no other', () => {
    expect([...documented.keys()].sort()).toEqual([...errorCodes, ...httpOnlyErrorCodes].sort());
  });

  it('gives each engine code the status the API answers it with', () => {
    // A stored payload's own route answers a missing one 404; a run that needs one fails as the operator's matter.
    const byRoute = new Set(['payload_not_found']);
    for (const code of errorCodes.filter((code) => !byRoute.has(code))) {
      expect({ code, status: documented.get(code) }).toEqual({
        code,
        status: toHttpError(new RelayError(code, 'x')).status,
      });
    }
  });
});
