// A scheduler pass in a person's words (issue 36): epics by their titles, and a sentence never
// capitalised into "Sf-5b51:".
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { reportPass, sentence, type SchedulerPass } from '../../src/extension/model/schedulerReport.ts';

const pass: SchedulerPass = {
  kind: 'once',
  actions: [
    {
      kind: 'transition',
      epicId: 'sf-5b51',
      event: 'signal_pass',
      reason: 'review skipped',
    } as SchedulerPass['actions'][number],
    { kind: 'merge', epicId: 'sf-77e1' },
  ],
  waiting: [],
  unstaffed: [],
  busy: false,
  roles: ['ralph'],
};

test('a pass names epics by title when told how, by id otherwise', () => {
  const titles: Record<string, string> = { 'sf-5b51': '“Wishlist”', 'sf-77e1': '“Order history”' };
  assert.equal(
    reportPass(pass, (id) => titles[id] ?? id).message,
    '“Wishlist”: review skipped and merging “Order history”',
  );
  assert.equal(reportPass(pass).message, 'sf-5b51: review skipped and merging sf-77e1');
});

test('a sentence is capitalised, an id at its start is not', () => {
  assert.equal(sentence('started Ralph on “Wishlist”'), 'Started Ralph on “Wishlist”');
  assert.equal(sentence('sf-5b51: review skipped'), 'sf-5b51: review skipped');
});
