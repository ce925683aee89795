// Error codes: each has one category and so one exit code, errors are made only with listed codes,
// and docs/cli-contract.md lists them all (src/core/errors.ts, docs/cli-contract.md "Exit codes").
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { exitCodeOf } from '../../src/cli/dispatch.ts';
import {
  type ErrorCode,
  ERROR_CODES,
  EnvironmentError,
  errorFor,
  isErrorCode,
  RefusedError,
  SpringfieldError,
  UsageError,
} from '../../src/core/errors.ts';
import { CONTRACT, documentedErrorCodes, renderErrorCodes } from '../../scripts/errorCodes.ts';

const CLASS = { refused: RefusedError, usage: UsageError, environment: EnvironmentError } as const;
const EXIT = { refused: 1, usage: 2, environment: 3 } as const;

test("every code makes an error of its category, which exits with that category's code", () => {
  const codes = Object.keys(ERROR_CODES) as ErrorCode[];
  assert.ok(codes.length > 100);
  for (const code of codes) {
    const err = errorFor(code, 'm');
    const category = ERROR_CODES[code];
    assert.ok(err instanceof CLASS[category], code);
    assert.deepEqual([err.code, err.category, err.message], [code, category, 'm']);
    assert.equal(exitCodeOf(code), EXIT[category], code);
  }
  assert.equal(new UsageError('unknown_step', 'x').category, 'usage');
  assert.equal(isErrorCode('not_holder'), true);
  assert.equal(isErrorCode('toString'), false);
  assert.equal(isErrorCode('no_such_code'), false);
});

test('an unlisted code, or a code with the class of another category, does not compile', () => {
  // `npm run typecheck` checks test/: each `@ts-expect-error` below fails it if its line compiles.
  // The functions are never called.
  const err = errorFor('not_holder', 'x') as SpringfieldError;
  const wrong = [
    // @ts-expect-error 'no_such_code' is not in ERROR_CODES: a new code needs its category there first
    () => new RefusedError('no_such_code', 'x'),
    // @ts-expect-error idem, for every class
    () => new EnvironmentError('no_such_code', 'x'),
    // @ts-expect-error unknown_step is a usage error (exit 2), not a refusal
    () => new RefusedError('unknown_step', 'x'),
    // @ts-expect-error database_locked is an environment error (exit 3)
    () => new UsageError('database_locked', 'x'),
    // @ts-expect-error matching on an unlisted code (a typo) is caught too
    () => err.code === 'not_the_holder',
    // @ts-expect-error the exit code is only asked of listed codes
    () => exitCodeOf('no_such_code'),
  ];
  assert.equal(wrong.length, 6);
});

test('docs/cli-contract.md lists every code under its exit code (node scripts/errorCodes.ts writes it)', () => {
  assert.equal(documentedErrorCodes(readFileSync(CONTRACT, 'utf8')), renderErrorCodes());
});
