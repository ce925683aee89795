// The epic state machine's contract on both backends (a temp SQLite file; a fresh PostgreSQL
// database): every transition of the table, refusals that write nothing, retry of a retryable block,
// the build budget, a claim waiting for its epic, merge approval. Only the Store interface is used.
import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/core/clock.ts';
import {
  allowedEvents,
  EPIC_EVENTS,
  EPIC_STATUSES,
  TRANSITIONS,
  type EpicEvent,
  type EpicStatus,
} from '../../src/core/epics/transitions.ts';
import { parsePlan } from '../../src/core/plan/parse.ts';
import type { Store } from '../../src/core/store/index.ts';
import type { Actor } from '../../src/core/store/types.ts';
import { contractBackends, type Backend } from '../helpers/storeBackends.ts';
import { planSourceOf } from '../../src/core/plan/source.ts';

const MARGE: Actor = { worktree: '/wt/main', agent: 'marge' };
const BART: Actor = { worktree: '/wt/review', agent: 'bart' };
const RALPH: Actor = { worktree: '/wt/build', agent: 'ralph' };
const PATH_TO: Readonly<Record<EpicStatus, readonly EpicEvent[]>> = {
  planned: [],
  ready: ['plan_approved'],
  in_progress: ['plan_approved', 'start'],
  implemented: ['plan_approved', 'start', 'steps_completed'],
  verified: ['plan_approved', 'start', 'steps_completed', 'signal_pass'],
  done: ['plan_approved', 'start', 'steps_completed', 'signal_pass', 'merged'],
  deferred: ['defer'],
  blocked: ['plan_approved', 'start', 'steps_completed', 'signal_adr_invalidated'],
};
const BACKENDS: Backend[] = contractBackends();

for (const backend of BACKENDS) {
  describe(`epic contract on ${backend.name}`, () => {
    const open = (t: TestContext, clock = new ManualClock(Date.UTC(2026, 2, 1))) => ({
      store: backend.open(t, clock),
      clock,
    });
    async function epicIn(store: Store, status: EpicStatus, title = `epic ${status}`): Promise<string> {
      const { id } = await store.createEpic({ title, brief: '', priority: 'P2' }, MARGE);
      for (const event of PATH_TO[status]) await store.applyEpicEvent(id, event, MARGE, `to reach ${status}`);
      return id;
    }

    test('every transition in the table writes exactly one event with its reason, actor and time', async (t) => {
      const { store, clock } = open(t);
      const rows = TRANSITIONS.filter((r) => r.event !== 'iteration_budget_exhausted' && r.event !== 'retry');
      for (const row of rows) {
        const id = await epicIn(store, row.from, `${row.from} ${row.event}`);
        clock.advance(60_000);
        const before = (await store.events({ epicId: id })).length;
        const reason = `because ${row.event} from ${row.from}`;
        const out = await store.applyEpicEvent(id, row.event, BART, reason);
        assert.deepEqual(
          [out.from, out.to, out.next_role, out.reason],
          [row.from, row.to, row.nextRole, reason],
          `${row.from} --${row.event}->`,
        );
        const epic = await store.getEpic(id);
        assert.deepEqual(
          [epic.status, epic.status_reason, epic.updated_at],
          [row.to, reason, clock.now().toISOString()],
        );
        const events = await store.events({ epicId: id });
        assert.equal(events.length, before + 1);
        const e = events.at(-1);
        assert.deepEqual(
          [e?.entity, e?.action, e?.epic_id, e?.from_status, e?.to_status, e?.reason, e?.at, e?.worktree, e?.agent],
          ['epic', row.event, id, row.from, row.to, reason, clock.now().toISOString(), BART.worktree, BART.agent],
        );
      }
    });

    test('an event the table does not allow is refused with the allowed events, and nothing is written', async (t) => {
      const { store } = open(t);
      for (const status of EPIC_STATUSES) {
        const id = await epicIn(store, status);
        const snapshot = JSON.stringify([await store.getEpic(id), (await store.events({ epicId: id })).length]);
        const allowed = allowedEvents(status);
        for (const event of EPIC_EVENTS.filter((e) => !allowed.includes(e))) {
          await assert.rejects(store.applyEpicEvent(id, event, MARGE, 'try'), (err: Error & { code?: string }) => {
            assert.equal(err.code, 'invalid_transition');
            assert.ok(err.message.endsWith(`allowed: ${allowed.length ? allowed.join(', ') : 'none'}`), err.message);
            return true;
          });
        }
        assert.equal(
          JSON.stringify([await store.getEpic(id), (await store.events({ epicId: id })).length]),
          snapshot,
          status,
        );
      }
      await assert.rejects(store.getEpic('sf-0000'), { code: 'unknown_epic', category: 'usage' });
    });

    test('retry lifts an agent_failed or plan_drift block, restoring its reason; other blocks are not retryable', async (t) => {
      const { store } = open(t);
      const id = await epicIn(store, 'in_progress', 'failing builder');
      const before = await store.getEpic(id);
      const blocked = await store.applyEpicEvent(
        id,
        'agent_failed',
        BART,
        'agent_failed: Ralph failed 3 times in a row',
        { role: 'ralph', failures: 3 },
      );
      assert.deepEqual([blocked.from, blocked.to], ['in_progress', 'blocked']);
      assert.deepEqual(await store.blockDetails(id), {
        event: 'agent_failed',
        at: (await store.events({ epicId: id })).at(-1)?.at,
        role: 'ralph',
        failures: 3,
      });
      const retried = await store.applyEpicEvent(id, 'retry', MARGE, 'key fixed');
      assert.deepEqual(
        [retried.from, retried.to, retried.iteration, retried.reason],
        ['blocked', 'in_progress', before.iteration, 'key fixed'],
      );
      assert.equal((await store.getEpic(id)).status_reason, before.status_reason);
      await assert.rejects(store.applyEpicEvent(id, 'retry', MARGE), { code: 'invalid_transition' });
      const drifted = await epicIn(store, 'in_progress', 'drifted');
      await store.applyEpicEvent(drifted, 'plan_drift', BART, 'plan_drift: plans/p.md differs');
      await store.applyEpicEvent(drifted, 'agent_failed', BART, 'agent_failed: Lisa failed 3 times in a row');
      assert.equal((await store.applyEpicEvent(drifted, 'retry', MARGE)).to, 'blocked');
      assert.equal((await store.getEpic(drifted)).status_reason, 'plan_drift: plans/p.md differs');
      assert.equal((await store.applyEpicEvent(drifted, 'retry', MARGE)).to, 'in_progress');
      const reviewed = await epicIn(store, 'implemented', 'reviewed');
      await store.applyEpicEvent(reviewed, 'signal_option_viability_failure', BART, 'wrong approach');
      await assert.rejects(store.applyEpicEvent(reviewed, 'retry', MARGE), {
        code: 'not_retryable',
        message: /is blocked by wrong approach, not by a failing agent or a drifted plan/,
      });
    });

    test('build iterations count each entry to in_progress; past the budget the epic is blocked (also by countIteration)', async (t) => {
      const { store } = open(t);
      const epic = await store.createEpic({ title: 'fix typo', brief: '', priority: 'P2' }, MARGE);
      assert.equal(epic.complexity, 'trivial');
      await store.applyEpicEvent(epic.id, 'plan_approved', MARGE, 'ok');
      await store.applyEpicEvent(epic.id, 'start', MARGE, 'go');
      for (let i = 2; i <= 5; i++) {
        await store.applyEpicEvent(epic.id, 'steps_completed', MARGE, 'done');
        const last = await store.applyEpicEvent(epic.id, 'signal_implementation_failure', BART, `miss ${i}`);
        assert.deepEqual([last.to, last.iteration], ['in_progress', i]);
      }
      assert.equal(await store.countIteration(epic.id, MARGE, 'one more'), false, 'the budget of 5 is spent');
      const row = await store.getEpic(epic.id);
      assert.deepEqual(
        [row.status, row.status_reason, row.iteration],
        ['blocked', 'iteration_budget_exhausted: 5 of 5 build iterations used; one more', 5],
      );
      const other = await epicIn(store, 'in_progress', 'standard work on the parser');
      assert.equal(await store.countIteration(other, MARGE, 'retry'), true);
      assert.equal((await store.getEpic(other)).iteration, 2);
    });

    test('every build-budget block carries one reason code and one wording: entry to in_progress, a counted failure, the event raised directly', async (t) => {
      const { store } = open(t);
      const wording = /^iteration_budget_exhausted: (\d+) of (\d+) build iterations used; \S/;
      const started = async (title: string, maxIterations: number) => {
        const e = await store.createEpic({ title, brief: '', priority: 'P2', maxIterations }, MARGE);
        await store.applyEpicEvent(e.id, 'plan_approved', MARGE, 'ok');
        await store.applyEpicEvent(e.id, 'start', MARGE, 'go');
        return e.id;
      };
      const onEntry = await started('entry', 1);
      await store.applyEpicEvent(onEntry, 'steps_completed', MARGE, 'done');
      const counted = await started('counted', 1);
      const raised = await started('raised', 3);
      const outcomes = [
        (await store.applyEpicEvent(onEntry, 'signal_implementation_failure', BART, 'miss')).reason,
        (await store.countIteration(counted, MARGE, 'ralph run 7 failed'))
          ? 'not blocked'
          : (await store.getEpic(counted)).status_reason,
        (await store.applyEpicEvent(raised, 'iteration_budget_exhausted', MARGE, 'verification failed')).reason,
      ];
      for (const [i, reason] of outcomes.entries()) assert.match(reason ?? '', wording, `path ${i}: ${reason}`);
      assert.deepEqual(
        outcomes.map((r) => wording.exec(r ?? '')?.slice(1, 3)),
        [
          ['1', '1'],
          ['1', '1'],
          ['1', '3'],
        ],
      );
      const events = (await store.events()).filter((e) => e.to_status === 'blocked').map((e) => e.reason);
      assert.deepEqual(events, outcomes, 'the event log records the same reason as the epic row');
    });

    test('a plan of an epic is claimed only while the epic is in progress; ready() says why it waits', async (t) => {
      const { store } = open(t);
      const id = await epicIn(store, 'ready', 'claims wait');
      const src = planSourceOf('plans/e.md', parsePlan('# Plan: E\n## Step 1: One\n- [ ] a\n', 'plans/e.md'));
      await store.initPlan(src, MARGE, { epicId: id });
      await assert.rejects(store.claimNext(src, RALPH), {
        code: 'epic_not_in_progress',
        message: `plans/e.md belongs to epic ${id}, which is ready; steps are claimed while it is in progress (start it: 'springfield epic start ${id}')`,
      });
      const waiting = await store.ready('plans/e.md');
      assert.deepEqual([waiting.ready_steps, waiting.waiting_steps, waiting.epic_status], [[], ['step-1'], 'ready']);
      assert.equal(
        waiting.waiting_reason,
        `plans/e.md belongs to epic ${id}, which is ready; steps are claimed while it is in progress (start it: 'springfield epic start ${id}')`,
        'ready agrees with claim, in the words claim refuses with',
      );
      await store.applyEpicEvent(id, 'start', MARGE, 'go');
      const started = await store.ready('plans/e.md');
      assert.deepEqual(
        [started.ready_steps, started.waiting_steps, started.waiting_reason, started.epic_status],
        [['step-1'], [], null, 'in_progress'],
      );
      assert.equal((await store.claimNext(src, RALPH)).claimed, true);
      assert.deepEqual(
        (await store.listEpics('in_progress')).map((e) => e.id),
        [id],
      );
      await store.reset('plans/e.md', 'step-1', MARGE);
      await store.applyEpicEvent(id, 'defer', MARGE, 'parked');
      await assert.rejects(store.claimNext(src, RALPH), {
        code: 'epic_not_in_progress',
        message: /which is deferred; steps are claimed while it is in progress$/,
      });
      assert.deepEqual((await store.ready('plans/e.md')).waiting_steps, ['step-1']);
    });

    test('merge approval only for an implemented or verified epic, recorded with who approved', async (t) => {
      const { store, clock } = open(t);
      const early = await epicIn(store, 'in_progress');
      await assert.rejects(store.approveMerge(early, MARGE), { code: 'invalid_transition' });
      const id = await epicIn(store, 'verified');
      clock.advance(1000);
      const row = await store.approveMerge(id, MARGE);
      assert.deepEqual([row.merge_approved_by, row.merge_approved_at], ['marge', clock.now().toISOString()]);
      assert.equal((await store.events({ epicId: id })).at(-1)?.action, 'approve_merge');
    });

    test('who plans an epic changes before its plan is approved, with an event; not after', async (t) => {
      const { store } = open(t);
      const { id } = await store.createEpic({ title: 'mine', brief: '', priority: 'P2', planner: 'person' }, MARGE);
      const row = await store.setPlanner(id, 'lisa', MARGE);
      assert.equal(row.planner, 'lisa');
      const last = (await store.events({ epicId: id })).at(-1);
      assert.deepEqual(
        [last?.action, last?.reason, last?.data],
        ['planner', 'Lisa writes its plan', { planner: 'lisa', was: 'person' }],
      );
      const count = (await store.events({ epicId: id })).length;
      await store.setPlanner(id, 'lisa', MARGE);
      assert.equal((await store.events({ epicId: id })).length, count, 'no event when nothing changes');
      await assert.rejects(store.setPlanner(await epicIn(store, 'ready'), 'person', MARGE), {
        code: 'invalid_transition',
      });
    });
  });
}
