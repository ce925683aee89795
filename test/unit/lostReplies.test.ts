// The tools' memory of a lost reply (src/core/agents/lostReplies.ts): which answers keep an operation id
// and which forget it, keyed by holder, tool and input whatever the input's key order. The store's side
// (the lookup by id) is tested against a real server in test/postgres/mcpResume.test.ts; here `send`
// stands for the store and throws the store's own error classes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LostReplies, canonicalJson } from '../../src/core/agents/lostReplies.ts';
import { EnvironmentError, OutcomeUnknownError, RefusedError } from '../../src/core/errors.ts';

const A = { worktree: '/wt/a', agent: 'agent-a' };
const OP = '11111111-1111-4111-8111-111111111111';
const LOST =
  'PostgreSQL at db went away while claiming; the outcome is unknown: run the same command again (it picks up where this one stopped)';

test('an unknown outcome keeps its id for the same tool, input and holder; a definite answer forgets it', async () => {
  const m = new LostReplies();
  const seen: (string | undefined)[] = [];
  await assert.rejects(
    m.run('springfield_claim_next_step', { plan: 'p.md', lease_seconds: 60 }, A, async (r) => {
      seen.push(r);
      throw new OutcomeUnknownError(OP, LOST);
    }),
    (e: Error) =>
      e instanceof OutcomeUnknownError &&
      e.op === OP &&
      e.message ===
        `PostgreSQL at db went away while claiming; the outcome is unknown: call springfield_claim_next_step again with the same input (it picks up where this call stopped) (operation ${OP}, kept by this server)`,
  );
  // Another holder, tool or input does not get it.
  await m.run(
    'springfield_claim_next_step',
    { plan: 'p.md', lease_seconds: 60 },
    { ...A, agent: 'agent-b' },
    async (r) => {
      seen.push(r);
    },
  );
  await m.run('springfield_record_signal', { plan: 'p.md', lease_seconds: 60 }, A, async (r) => {
    seen.push(r);
  });
  await m.run('springfield_claim_next_step', { plan: 'q.md', lease_seconds: 60 }, A, async (r) => {
    seen.push(r);
  });
  // Unreachable again: kept.
  await assert.rejects(
    m.run('springfield_claim_next_step', { lease_seconds: 60, plan: 'p.md' }, A, async (r) => {
      seen.push(r);
      throw new EnvironmentError('database_unreachable', 'away');
    }),
  );
  assert.equal(m.size, 1);
  // The same input in another key order: resumed, then forgotten.
  assert.equal(
    await m.run('springfield_claim_next_step', { lease_seconds: 60, plan: 'p.md' }, A, async (r) => {
      seen.push(r);
      return 'ok';
    }),
    'ok',
  );
  assert.equal(m.size, 0);
  await m.run('springfield_claim_next_step', { plan: 'p.md', lease_seconds: 60 }, A, async (r) => {
    seen.push(r);
  });
  assert.deepEqual(seen, [undefined, undefined, undefined, undefined, OP, OP, undefined]);
});

test('a refusal is a definite answer: the id is forgotten; a new lost call replaces the old id', async () => {
  const m = new LostReplies();
  const lose = (op: string) =>
    m.run('t', {}, A, async () => {
      throw new OutcomeUnknownError(op, 'gone');
    });
  await assert.rejects(lose(OP));
  const other = '22222222-2222-4222-8222-222222222222';
  await assert.rejects(
    lose(other),
    (e: Error) =>
      e.message ===
      `gone: call t again with the same input (it picks up where this call stopped) (operation ${other}, kept by this server)`,
  );
  let got: string | undefined;
  await assert.rejects(
    m.run('t', {}, A, async (r) => {
      got = r;
      throw new RefusedError('not_holder', 'no');
    }),
    { code: 'not_holder' },
  );
  assert.equal(got, other);
  assert.equal(m.size, 0);
  assert.equal(canonicalJson({ b: [{ d: 1, c: 2 }], a: null }), '{"a":null,"b":[{"c":2,"d":1}]}');
});
