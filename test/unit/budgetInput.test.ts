// Raise budget…'s input (issue 36): a suggested value above the spend, and no limit it has already reached.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { budgetInputError, suggestedBudget } from '../../src/extension/model/budgetInput.ts';

test('the suggested budget is above both the spend and the old limit', () => {
  assert.equal(suggestedBudget(20.4, 20), 31);
  assert.equal(suggestedBudget(2_013_400, 2_000_000), 3_020_100);
  assert.equal(suggestedBudget(0.002, 0.001), 1);
  assert.equal(suggestedBudget(3, null), 5);
});

test('a new limit at or under the spend is refused, saying why; a number above it is taken', () => {
  assert.equal(budgetInputError('usd', '25', 20.4, '$20.40'), null);
  assert.equal(
    budgetInputError('usd', '20', 20.4, '$20.40'),
    'more than it has already spent ($20.40), or it pauses again at once',
  );
  assert.equal(budgetInputError('usd', '20.40', 20.4, '$20.40')?.startsWith('more than'), true);
  assert.equal(budgetInputError('tokens', '1.5', 0, '0 tokens'), 'a positive whole number');
  assert.equal(budgetInputError('minutes', 'ten', 0, '0 agent minutes'), 'a positive number');
});
