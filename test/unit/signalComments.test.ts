import assert from 'node:assert/strict';
import { test } from 'node:test';
import { signalFilePath } from '../../src/extension/model/epicFacts.ts';
import { signalCommentBody } from '../../src/extension/views/viewText.ts';

const HOSTILE =
  '**done** [open](command:workbench.action.terminal.new) <img src=x onerror=alert(1)> `code`\n# Heading\n- item _x_';

/** What is left of the Markdown syntax once every escaped character is removed: nothing may remain. */
function unescapedSyntax(markdown: string): string[] {
  return [...markdown.replace(/\\[\\`*_{}[\]()#+\-.!|<>]/g, '').matchAll(/[`*_[\]()<>#]/g)].map((m) => m[0]);
}

test("a signal comment's summary, note and decision are escaped: Bart's text never becomes links, HTML or formatting", () => {
  const body = signalCommentBody(
    { type: 'implementation_failure', summary: HOSTILE, status: 'decided', resolution: `accept ${HOSTILE}` },
    { note: HOSTILE },
    '[me](http://x)',
  );
  const bart = body
    .replace(/\n\n\*\*implementation failure\*\* — /, '\n\n')
    .replace(/\n\n_Decided: /, '\n\n')
    .replace(/\._$/, '');
  assert.deepEqual(unescapedSyntax(bart), [], 'only our own frame is Markdown');
  assert.ok(
    body.startsWith('\\*\\*done\\*\\* \\[open\\]\\(command:workbench\\.action\\.terminal\\.new\\) \\<img'),
    body,
  );
  assert.ok(body.includes('\n\\# Heading\n\\- item \\_x\\_'), 'line starts cannot open a heading or a list');
  assert.ok(body.includes('\n\n**implementation failure** — \\*\\*done'), 'the note leads, the signal follows');
});

test("a place's note leads its comment (the Comments panel lists a comment's first line), the signal after it", () => {
  const body = signalCommentBody(
    {
      type: 'implementation_failure',
      summary: 'Changes requested in review: Use a Map (+1 more)',
      status: 'open',
      resolution: null,
    },
    { note: 'Name the cache' },
    null,
  );
  assert.equal(
    body,
    'Name the cache\n\n**implementation failure** — Changes requested in review: Use a Map \\(\\+1 more\\)',
  );
});

test('a signal waiting for a person says so; its own words stay escaped', () => {
  const body = signalCommentBody(
    { type: 'pass', summary: 'all *good*', status: 'awaiting_person', resolution: null },
    { note: null },
    null,
  );
  assert.equal(
    body,
    '**pass** — all \\*good\\*\n\n_Waiting for your decision: add a note if you like, then Send back to Ralph, Escalate to Lisa or Accept._',
  );
});

test("a signal's thread is on the file in the epic's worktree, whose branch was reviewed; main's copy only once it has none", () => {
  const at = (status: string, worktree_path: string | null) =>
    signalFilePath({ status, worktree_path } as Parameters<typeof signalFilePath>[0], 'src/refund.ts', '/repo/shop');
  assert.equal(at('in_progress', '/repo/shop.springfield/sf-1/'), '/repo/shop.springfield/sf-1/src/refund.ts');
  assert.equal(at('implemented', '/repo/shop.springfield/sf-1'), '/repo/shop.springfield/sf-1/src/refund.ts');
  // Merged (its worktree removed with the merge) or never started: the window's checkout.
  assert.equal(at('done', '/repo/shop.springfield/sf-1'), '/repo/shop/src/refund.ts');
  assert.equal(at('blocked', null), '/repo/shop/src/refund.ts');
  assert.equal(signalFilePath(undefined, 'a.ts', '/repo/'), '/repo/a.ts');
});
