import { test } from 'node:test';
import assert from 'node:assert/strict';
import { COMPLEXITY_POLICY, detectComplexity, parseComplexity } from '../../src/core/epics/index.ts';
import { UsageError } from '../../src/core/errors.ts';

test('"fix typo" is trivial with 5 build iterations', () => {
  const level = detectComplexity('fix typo', '');
  assert.equal(level, 'trivial');
  assert.equal(COMPLEXITY_POLICY[level].buildIterations, 5);
});

test('"add auth migration" is critical with 40 build iterations', () => {
  const level = detectComplexity('add auth migration', '');
  assert.equal(level, 'critical');
  assert.equal(COMPLEXITY_POLICY[level].buildIterations, 40);
});

test('detection examples', () => {
  const cases: [string, string][] = [
    ['Add toggle button', 'simple'],
    ['Refactor payments', 'critical'],
    ['author page', 'standard'],
    ['Authority badge', 'standard'],
    ['Add authentication', 'critical'],
    ['Run migrations', 'critical'],
    ['Fix OAuth callback', 'critical'],
    ['auth_token refresh', 'critical'],
    ['Rename variable', 'trivial'],
    ['Fix misspelled word in README', 'trivial'],
    ['Trim whitespace', 'trivial'],
    ['Remove unused imports', 'simple'],
    ['Fix typo on the button', 'simple'],
    ['Rename the security module', 'critical'],
    ['Add feature flags', 'simple'],
    ['Flagship landing page', 'standard'],
    ['Build a caching layer', 'standard'],
    ['', 'standard'],
  ];
  for (const [title, expected] of cases) assert.equal(detectComplexity(title, ''), expected, title);
});

test('keywords in the brief count', () => {
  assert.equal(detectComplexity('Update login page', 'Store the credential in the keychain.'), 'critical');
  assert.equal(detectComplexity('Tidy docs', 'Only comments change.'), 'trivial');
  assert.equal(detectComplexity('Tidy docs'), 'standard');
});

test('policy values', () => {
  assert.deepEqual(COMPLEXITY_POLICY, {
    trivial: { planIterations: 2, buildIterations: 5, review: 'skip_when_verified', personApprovalBeforeMerge: false },
    simple: { planIterations: 3, buildIterations: 10, review: 'skip_when_verified', personApprovalBeforeMerge: false },
    standard: { planIterations: 5, buildIterations: 20, review: 'auto', personApprovalBeforeMerge: false },
    critical: { planIterations: 8, buildIterations: 40, review: 'required', personApprovalBeforeMerge: true },
  });
});

test('parseComplexity accepts the levels case-insensitively and refuses others', () => {
  assert.equal(parseComplexity('critical'), 'critical');
  assert.equal(parseComplexity(' TRIVIAL '), 'trivial');
  for (const bad of ['', 'hard', 'standardish']) {
    assert.throws(
      () => parseComplexity(bad),
      (err: unknown) => {
        assert.ok(err instanceof UsageError);
        assert.equal(err.code, 'invalid_complexity');
        assert.match(err.message, /trivial, simple, standard, critical/);
        return true;
      },
    );
  }
});
