// Agent runs on both backends (a temp SQLite file; a fresh PostgreSQL database), through the Store
// interface only: a run begun on a held step, its outcomes and what follows them (the step released,
// a failure counted), a launch that never ran, usage and sessions, orphans judged by their pid. Then,
// on PostgreSQL, what only several hosts have: a run from another host is never this host's orphan.
import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/core/clock.ts';
import { parsePlan } from '../../src/core/plan/parse.ts';
import type { PlanSource } from '../../src/core/plan/types.ts';
import type { Store } from '../../src/core/store/index.ts';
import type { AgentRunInput, AgentRunStart, NewRun } from '../../src/core/store/runTypes.ts';
import type { Actor } from '../../src/core/store/types.ts';
import { contractBackends, type Backend } from '../helpers/storeBackends.ts';
import { planSourceOf } from '../../src/core/plan/source.ts';
import { renewalWarning } from '../../src/core/supervisor/heartbeat.ts';

const MARGE: Actor = { worktree: '/wt/main', agent: 'marge' };
const RALPH: Actor = { worktree: '/wt/build', agent: 'ralph' };
const OTHER: Actor = { worktree: '/wt/other', agent: 'ralph-2' };
const P = 'plans/r.md';
const SOURCE: PlanSource = planSourceOf(
  P,
  parsePlan('# Plan: Runs\n## Step 1: One\n- [ ] a\n- [ ] b\n## Step 2: Two\n- [ ] c\n', P),
);
const BACKENDS: Backend[] = contractBackends();

/** An in-progress epic owning plans/r.md, step-1 claimed by Ralph's worktree. */
async function heldStep(store: Store): Promise<{ id: string; token: number }> {
  const { id } = await store.createEpic({ title: 'runs on a parser', brief: '', priority: 'P2' }, MARGE);
  await store.applyEpicEvent(id, 'plan_approved', MARGE, 'ok');
  await store.applyEpicEvent(id, 'start', MARGE, 'go');
  await store.initPlan(SOURCE, MARGE, { epicId: id });
  const claim = await store.claimNext(SOURCE, RALPH, { leaseSeconds: 600 });
  assert.ok(claim.claimed && claim.step_anchor === 'step-1');
  return { id, token: claim.claim_token };
}

const input = (epicId: string, over: Partial<AgentRunInput> = {}): AgentRunInput => ({
  role: 'ralph',
  epicId,
  planArg: undefined,
  stepAnchor: 'step-1',
  command: ['agent', '--flag', 'a b'],
  actor: RALPH,
  leaseSeconds: 3600,
  headBefore: 'aaa',
  launchId: null,
  pid: 4242,
  ...over,
});

const newRun = (epicId: string, over: Partial<NewRun> = {}): NewRun => ({
  epicId,
  planPath: null,
  stepAnchor: null,
  role: 'bart',
  iteration: 0,
  worktree: '/wt/review',
  agentId: null,
  command: ['true'],
  pid: 1,
  ...over,
});

for (const backend of BACKENDS) {
  describe(`runs contract on ${backend.name}`, () => {
    const open = (t: TestContext, clock = new ManualClock(Date.UTC(2026, 3, 1))) => ({
      store: backend.open(t, clock),
      clock,
    });

    test('beginAgentRun checks the holder, renews the lease and records the run; a run that did nothing releases its step and counts an iteration', async (t) => {
      const { store, clock } = open(t);
      const { id, token } = await heldStep(store);
      clock.advance(60_000);
      const begun = await store.beginAgentRun(input(id));
      const startedAt = clock.now().toISOString();
      assert.deepEqual(
        [begun.planPath, begun.stepAnchor, begun.holder.token, begun.agent, begun.ownWorktree, begun.marks],
        [P, 'step-1', token, 'ralph', false, { proposals: 0, signals: 0, itemsDone: 0 }],
      );
      const r = begun.run;
      assert.deepEqual(
        [
          r.epic_id,
          r.plan_path,
          r.step_anchor,
          r.role,
          r.iteration,
          r.worktree,
          r.agent_id,
          r.command,
          r.pid,
          r.status,
          r.started_at,
          r.claim_token,
          r.head_before,
          r.ended_at,
        ],
        [
          id,
          P,
          'step-1',
          'ralph',
          1,
          RALPH.worktree,
          'ralph',
          JSON.stringify(['agent', '--flag', 'a b']),
          4242,
          'running',
          startedAt,
          token,
          'aaa',
          null,
        ],
      );
      const step = await store.stepRecord(P, 'step-1');
      assert.equal(
        step.lease_expires_at,
        new Date(clock.now().getTime() + 3600_000).toISOString(),
        "the lease was renewed by the run's first heartbeat",
      );
      await store.setAgentPid(r.id, 777);
      assert.deepEqual(
        (await store.runs({ active: true })).map((x) => [x.id, x.agent_pid]),
        [[r.id, 777]],
      );

      clock.advance(5_000);
      const ended = await store.finishRun(
        r.id,
        { exitCode: 0, signal: null, outputTail: 'tail\n', headAfter: 'aaa', marks: begun.marks },
        RALPH,
      );
      assert.deepEqual(
        [ended.status, ended.outcome_reason, ended.exit_code, ended.ended_at, ended.output_tail, ended.head_after],
        [
          'no_progress',
          'exited 0 without completing step-1, committing or ticking an item',
          0,
          clock.now().toISOString(),
          'tail\n',
          'aaa',
        ],
      );
      const released = await store.stepRecord(P, 'step-1');
      assert.deepEqual(
        [released.status, released.claimed_by, released.claim_token],
        ['pending', null, token + 1],
        'released at once, the old token fenced',
      );
      assert.equal(
        (await store.getEpic(id)).iteration,
        2,
        'a Ralph run that did not succeed counts one build iteration',
      );
      const actions = (await store.events()).map((e) => `${e.entity}:${e.action}`);
      assert.deepEqual(actions.slice(-4), ['run:start', 'run:finish', 'step:reset', 'epic:iteration']);
      const again = await store.finishRun(r.id, { exitCode: 1, signal: null }, RALPH);
      assert.deepEqual([again.status, again.exit_code], ['no_progress', 0], 'finishing twice changes nothing');
      assert.equal((await store.getEpic(id)).iteration, 2);
      await assert.rejects(store.finishRun(99_999, { exitCode: 0, signal: null }, RALPH), { code: 'unknown_run' });
    });

    test('a refused renewal of the lease warns, unless the run’s step is completed (a beat between the finish and the exit)', async (t) => {
      const refusal = async (store: Store, begun: AgentRunStart) => {
        const err: unknown = await store.heartbeat(P, 'step-1', begun.holder, { leaseSeconds: 600 }).then(
          () => assert.fail('the renewal was refused'),
          (e: unknown) => e,
        );
        return renewalWarning(store, begun, err);
      };
      const finished = open(t).store;
      const done = await finished.beginAgentRun(input((await heldStep(finished)).id));
      const items = [0, 1].map((ordinal) => ({
        selector: { kind: 'task' as const, ordinal },
        status: 'completed' as const,
      }));
      await finished.updateItems(SOURCE, 'step-1', items, { ...RALPH, token: done.holder.token });
      await finished.complete(SOURCE, 'step-1', { ...RALPH, token: done.holder.token });
      assert.equal((await finished.stepRecord(P, 'step-1')).status, 'completed');
      assert.equal(await refusal(finished, done), null, 'nothing to warn of: the agent finished its step');

      const reset = open(t).store;
      const taken = await reset.beginAgentRun(input((await heldStep(reset)).id));
      await reset.reset(P, 'step-1', MARGE, 'hand it over');
      assert.match(
        (await refusal(reset, taken)) ?? '',
        /^stopped renewing the lease on step-1: cannot heartbeat step-1: it is pending, not claimed/,
      );
    });

    test('beginAgentRun refuses a worktree that does not hold the step, a plan of another epic, a step without a plan; nothing is recorded', async (t) => {
      const { store } = open(t);
      const { id } = await heldStep(store);
      await assert.rejects(store.beginAgentRun(input(id, { actor: OTHER })), { code: 'not_holder' });
      const { id: bare } = await store.createEpic({ title: 'no plan yet', brief: '', priority: 'P2' }, MARGE);
      await assert.rejects(store.beginAgentRun(input(bare, { planArg: P })), {
        code: 'wrong_plan',
        message: `${P} belongs to epic ${id}, not ${bare}`,
      });
      await assert.rejects(store.beginAgentRun(input(bare)), { code: 'no_plan' });
      await assert.rejects(store.beginAgentRun(input('sf-0000')), { code: 'unknown_epic' });
      assert.deepEqual(await store.runs(), []);
      const lisa = await store.beginAgentRun(input(bare, { role: 'lisa', stepAnchor: null, actor: MARGE }));
      assert.deepEqual([lisa.planPath, lisa.holder.token, lisa.agent, lisa.run.iteration], [null, null, 'marge', 0]);
    });

    test('outcomes: timeout, fault, signal and exit code fail; progress decides an exit 0; a completed step is not released', async (t) => {
      const { store } = open(t);
      const { id } = await heldStep(store);
      const start = (over: Partial<NewRun> = {}) => store.startRun(newRun(id, over), MARGE);
      const cases: [Parameters<Store['finishRun']>[1], string, string | null][] = [
        [
          { exitCode: 143, signal: 'SIGTERM', timedOut: true, timeoutSeconds: 30 },
          'timed_out',
          'ran past its timeout of 30 s; its process group was ended',
        ],
        [{ exitCode: 0, signal: null, fault: 'left main' }, 'failed', 'left main'],
        [{ exitCode: 130, signal: 'SIGINT' }, 'failed', 'ended by SIGINT'],
        [{ exitCode: 3, signal: null }, 'failed', 'exit 3'],
        [{ exitCode: 0, signal: null }, 'succeeded', null],
      ];
      for (const [end, status, reason] of cases) {
        const r = await store.finishRun((await start({ role: 'lovejoy' })).id, end, MARGE);
        assert.deepEqual([r.status, r.outcome_reason], [status, reason], JSON.stringify(end));
      }
      const marks = { proposals: 0, signals: 0, itemsDone: 0 };
      const bart = await start();
      assert.equal((await store.finishRun(bart.id, { exitCode: 0, signal: null, marks }, MARGE)).status, 'no_progress');
      await store.applyEpicEvent(id, 'steps_completed', MARGE, 'done');
      const reviewer = await start();
      await store.recordSignal(id, 'pass', 'looks right', [], { worktree: '/wt/review', agent: 'bart' });
      assert.deepEqual(
        [(await store.finishRun(reviewer.id, { exitCode: 0, signal: null, marks }, MARGE)).status],
        ['succeeded'],
        'a signal recorded since the start is progress',
      );
      const builder = await store.beginAgentRun(input(id));
      await store.updateItems(SOURCE, 'step-1', [{ selector: { kind: 'task', ordinal: 0 }, status: 'completed' }], {
        ...RALPH,
        token: builder.holder.token,
      });
      const done = await store.finishRun(
        builder.run.id,
        { exitCode: 0, signal: null, headAfter: 'aaa', marks: builder.marks },
        RALPH,
      );
      assert.equal(done.status, 'succeeded', 'a ticked item is progress');
      const step = await store.stepRecord(P, 'step-1');
      assert.deepEqual(
        [step.status, step.claim_token],
        ['pending', builder.holder.token! + 1],
        'a succeeded run that left its step unfinished releases it',
      );
    });

    test('spend (docs/budgets.md): per epic the cost and tokens its ended sessions reported and the minutes of those without a cost; today over every epic; its own limits set, kept and refused', async (t) => {
      const clock = new ManualClock(Date.parse('2026-04-01T23:00:00.000Z'));
      const { store } = open(t, clock);
      const { id } = await heldStep(store);
      const other = await store.createEpic(
        { title: 'costly other', brief: '', priority: 'P2', budget: { usd: 20, minutes: 90 } },
        MARGE,
      );
      assert.deepEqual(
        [other.budget_usd, other.budget_tokens, other.budget_minutes],
        [20, null, 90],
        'its own limits, given at creation',
      );
      const usage = (costUsd: number | null, inputTokens: number | null, outputTokens: number | null) => ({
        costUsd,
        inputTokens,
        outputTokens,
        cacheReadTokens: 99,
        cacheWriteTokens: null,
        premiumRequests: null,
      });
      // [epic, role, minutes it ran, usage]: a run without a cost counts its minutes; setup is no session; a run still going counts nothing yet.
      const runs: [string, 'bart' | 'lisa' | 'setup', number, ReturnType<typeof usage> | null][] = [
        [id, 'bart', 2, usage(0.25, 1000, 200)],
        [id, 'bart', 3, usage(0.5, 10, null)],
        [id, 'lisa', 30, usage(null, 500, 50)],
        [id, 'lisa', 15, null],
        [id, 'setup', 60, null],
        [other.id, 'bart', 1, usage(4, null, null)],
      ];
      for (const [epicId, role, minutes, u] of runs) {
        const r = await store.startRun(newRun(epicId, { role }), MARGE);
        clock.advance(minutes * 60_000);
        await store.finishRun(r.id, { exitCode: 0, signal: null, usage: u }, MARGE);
      }
      await store.startRun(newRun(id, { role: 'bart' }), MARGE);
      // The clock is now past midnight (UTC): only the runs that ended on the new day are today's.
      assert.equal(clock.now().toISOString().slice(0, 10), '2026-04-02');
      const report = await store.spend();
      assert.deepEqual(
        report.epics
          .map((e) => ({ ...e, minutes: Math.round(e.minutes * 1000) / 1000 }))
          .sort((a, b) => a.epic_id.localeCompare(b.epic_id)),
        [
          { epic_id: id, usd: 0.75, tokens: 1760, minutes: 45, runs: 4 },
          { epic_id: other.id, usd: 4, tokens: 0, minutes: 0, runs: 1 },
        ].sort((a, b) => a.epic_id.localeCompare(b.epic_id)),
      );
      assert.deepEqual(
        report.today,
        { day: '2026-04-02', usd: 4 },
        "today: the cost of runs that ended since midnight UTC, every epic's",
      );
      const none = await store.createEpic({ title: 'nothing spent', brief: '', priority: 'P2' }, MARGE);
      assert.deepEqual((await store.spend(none.id)).epics, [
        { epic_id: none.id, usd: 0, tokens: 0, minutes: 0, runs: 0 },
      ]);
      await assert.rejects(store.spend('sf-none'), { code: 'unknown_epic' });

      const snapshot = await store.schedulerSnapshot();
      const mine = snapshot.epics.find((e) => e.id === id);
      assert.deepEqual(
        [
          mine?.spend?.usd,
          mine?.spend?.tokens,
          Math.round((mine?.spend?.minutes ?? 0) * 1000) / 1000,
          mine?.costBudget,
        ],
        [0.75, 1760, 45, { usd: null, tokens: null, minutes: null }],
      );
      assert.deepEqual(snapshot.epics.find((e) => e.id === other.id)?.costBudget, {
        usd: 20,
        tokens: null,
        minutes: 90,
      });
      assert.deepEqual(snapshot.today, { day: '2026-04-02', usd: 4 });

      const raised = await store.setEpicBudget(other.id, { usd: 40, tokens: 1_000_000 }, MARGE);
      assert.deepEqual(
        [raised.budget_usd, raised.budget_tokens, raised.budget_minutes],
        [40, 1_000_000, 90],
        'a limit left out keeps its value',
      );
      const cleared = await store.setEpicBudget(other.id, { minutes: null }, MARGE);
      assert.deepEqual(
        [cleared.budget_usd, cleared.budget_tokens, cleared.budget_minutes],
        [40, 1_000_000, null],
        "null: back to the config's",
      );
      const event = (await store.events({ epicId: other.id })).filter((e) => e.action === 'budget');
      assert.equal(event.length, 2);
      await assert.rejects(store.setEpicBudget(other.id, { usd: 0 }, MARGE), { code: 'bad_budget', category: 'usage' });
      await assert.rejects(store.setEpicBudget(other.id, { usd: -3 }, MARGE), { code: 'bad_budget' });
      assert.equal((await store.getEpic(other.id)).budget_usd, 40, 'a refused change writes nothing');
    });

    test("a launch that never recorded its run is recorded failed at the epic's iteration; usage and sessions are counted by role", async (t) => {
      const { store, clock } = open(t);
      const { id } = await heldStep(store);
      const failed = await store.recordFailedLaunch(
        {
          epicId: id,
          planPath: null,
          stepAnchor: null,
          role: 'lisa',
          worktree: '/wt/plan',
          agentId: 'lisa',
          command: ['lisa'],
          pid: 9,
          launchId: 'L1',
        },
        { exitCode: 3, signal: null, fault: 'springfield run exited 3 before recording the run' },
        MARGE,
      );
      assert.deepEqual(
        [failed.status, failed.iteration, failed.launch_id, failed.outcome_reason, failed.ended_at],
        ['failed', 0, 'L1', 'springfield run exited 3 before recording the run', clock.now().toISOString()],
      );
      const usage = {
        costUsd: 0.25,
        inputTokens: 1000,
        outputTokens: 200,
        cacheReadTokens: 5,
        cacheWriteTokens: null,
        premiumRequests: 1.5,
      };
      for (const [role, u] of [
        ['bart', usage],
        ['bart', { ...usage, costUsd: 0.5, inputTokens: 10 }],
        ['lovejoy', null],
        ['setup', null],
      ] as const) {
        const r = await store.startRun(newRun(id, { role, launchId: `L-${role}` }), MARGE);
        const ended = await store.finishRun(r.id, { exitCode: 0, signal: null, usage: u }, MARGE);
        if (u)
          assert.deepEqual(
            [
              ended.cost_usd,
              ended.input_tokens,
              ended.output_tokens,
              ended.cache_read_tokens,
              ended.cache_write_tokens,
              ended.premium_requests,
            ],
            [u.costUsd, u.inputTokens, 200, 5, null, 1.5],
          );
      }
      assert.deepEqual(await store.usageByEpic(id), [
        { epic_id: id, role: 'bart', runs: 2, cost_usd: 0.75, input_tokens: 1010, output_tokens: 400 },
      ]);
      assert.deepEqual(
        await store.sessionCounts(),
        { [id]: { lisa: 1, ralph: 0, bart: 2, lovejoy: 1, total: 4 } },
        'setup is no session',
      );
      assert.deepEqual(await store.sessionCounts('sf-none'), {});
      assert.deepEqual((await store.runsByLaunch(['L1', 'L-lovejoy', 'nope'])).map((r) => r.launch_id).sort(), [
        'L-lovejoy',
        'L1',
      ]);
      assert.deepEqual(await store.runsByLaunch([]), []);
      assert.equal((await store.latestRun(id))?.role, 'setup');
      assert.equal((await store.latestRun(id, 'bart'))?.cost_usd, 0.5);
      assert.equal(await store.latestRun(id, 'ralph'), null);
      assert.deepEqual(
        (await store.runs({ epicId: id, limit: 2 })).map((r) => r.role),
        ['setup', 'lovejoy'],
        'newest first',
      );
    });

    test('markOrphans marks a run whose supervisor is gone lost once, releasing its step and counting it; live ones are left', async (t) => {
      const { store } = open(t);
      const { id, token } = await heldStep(store);
      const mine = await store.startRun(newRun(id, { pid: process.pid }), null);
      const gone = await store.beginAgentRun(input(id, { pid: 999_999 }));
      const asked: number[] = [];
      assert.deepEqual(
        (
          await store.findOrphans((pid) => {
            asked.push(pid);
            return pid !== 999_999;
          })
        ).map((r) => r.id),
        [gone.run.id],
      );
      const lost = await store.markOrphans((pid) => pid !== 999_999, null);
      assert.ok(asked.includes(process.pid) && asked.includes(999_999));
      assert.deepEqual(
        lost.map((r) => [r.id, r.status, r.exit_code, r.outcome_reason]),
        [[gone.run.id, 'lost', null, 'supervising process 999999 is gone']],
      );
      assert.deepEqual(await store.markOrphans((pid) => pid !== 999_999, null), [], 'marking is done once');
      assert.deepEqual(
        (await store.runs({ active: true, epicId: id })).map((r) => r.id),
        [mine.id],
      );
      const step = await store.stepRecord(P, 'step-1');
      assert.deepEqual(
        [step.status, step.claim_token],
        ['pending', token + 1],
        'claimable at once, the lost holder fenced',
      );
      assert.equal((await store.getEpic(id)).iteration, 2);
      const late = await store.finishRun(gone.run.id, { exitCode: 0, signal: null }, RALPH);
      assert.deepEqual(
        [late.status, (await store.getEpic(id)).iteration],
        ['succeeded', 2],
        'a late finish corrects the outcome and counts nothing again',
      );
    });
  });
}

// Holders and pids are per host where a store serves several (PostgreSQL).
const pgBackend = BACKENDS.find((b) => b.name === 'postgres');
if (pgBackend)
  describe('runs on several hosts (PostgreSQL)', () => {
    test('a run from another host is never marked orphaned here, and the snapshot gives this host no pid of it', async (t) => {
      const clock = new ManualClock(Date.UTC(2026, 3, 1));
      const a = pgBackend.open(t, clock, { host: 'host-a' });
      const b = pgBackend.open(t, clock, { host: 'host-b', shareWith: a });
      const { id } = await heldStep(a);
      const onB = await b.startRun(newRun(id, { pid: 999_998 }), null);
      const onA = await a.startRun(newRun(id, { pid: 999_997 }), null);
      const asked: number[] = [];
      const dead = (pid: number) => {
        asked.push(pid);
        return false;
      };
      assert.deepEqual(
        (await a.findOrphans(dead)).map((r) => r.id),
        [onA.id],
      );
      assert.deepEqual(
        (await a.markOrphans(dead, null)).map((r) => r.id),
        [onA.id],
      );
      assert.equal(asked.includes(999_998), false, "host a never asks about host b's pid");
      assert.deepEqual(
        (await a.runs({ active: true })).map((r) => r.id),
        [onB.id],
        "host b's run is still running",
      );
      const snapshot = await a.schedulerSnapshot();
      assert.deepEqual(
        snapshot.runs.map((r) => [r.id, r.pid, r.epicId]),
        [[onB.id, null, id]],
        'listed (it takes a slot), without a pid to signal',
      );
      assert.deepEqual(
        (await b.schedulerSnapshot()).runs.map((r) => [r.id, r.pid]),
        [[onB.id, 999_998]],
      );
      assert.deepEqual(
        (await b.markOrphans(dead, null)).map((r) => r.id),
        [onB.id],
        'its own host marks it',
      );
    });

    test('two processes of one host marking orphans and finishing at once settle each run once: one outcome, one release, one iteration', async (t) => {
      const clock = new ManualClock(Date.UTC(2026, 3, 1));
      const stores = [pgBackend.open(t, clock, { host: 'host-a' })];
      for (let i = 0; i < 3; i++) stores.push(pgBackend.open(t, clock, { host: 'host-a', shareWith: stores[0] }));
      const [a] = stores as [Store];
      const { id, token } = await heldStep(a);
      const begun = await a.beginAgentRun(input(id, { pid: 999_996 }));
      const settled = await Promise.all([
        ...stores.slice(0, 3).map((s) => s.markOrphans(() => false, null)),
        stores[3]!.finishRun(begun.run.id, { exitCode: 1, signal: null }, RALPH).then((r) => [r]),
      ]);
      assert.equal(settled.slice(0, 3).flat().length <= 1, true, 'marked lost at most once');
      const events = await a.events();
      assert.equal(
        events.filter((e) => e.entity === 'run' && (e.action === 'lost' || e.action === 'finish')).length >= 1,
        true,
      );
      assert.equal(
        events.filter((e) => e.entity === 'step' && e.action === 'reset').length,
        1,
        'the step was released once',
      );
      assert.equal(
        events.filter((e) => e.entity === 'epic' && e.action === 'iteration').length,
        1,
        'the failure counted once',
      );
      const step = await a.stepRecord(P, 'step-1');
      assert.deepEqual([step.status, step.claim_token, (await a.getEpic(id)).iteration], ['pending', token + 1, 2]);
    });

    test("a run ending on one host releases only its own host's claim: the same worktree path on another host keeps its step", async (t) => {
      const clock = new ManualClock(Date.UTC(2026, 3, 1));
      const a = pgBackend.open(t, clock, { host: 'host-a' });
      const b = pgBackend.open(t, clock, { host: 'host-b', shareWith: a });
      const { id } = await heldStep(a);
      const begun = await a.beginAgentRun(input(id));
      await assert.rejects(b.beginAgentRun(input(id)), { code: 'not_holder', message: /held by host-a:\/wt\/build/ });
      await a.reset(P, 'step-1', MARGE, 'hand it over');
      const claim = await b.claimNext(SOURCE, RALPH, { leaseSeconds: 600 });
      assert.ok(claim.claimed && claim.step_anchor === 'step-1');
      // A stale row naming host b's token: the release is fenced by the host too.
      const forged = await a.startRun(
        newRun(id, {
          role: 'ralph',
          planPath: P,
          stepAnchor: 'step-1',
          worktree: RALPH.worktree,
          claimToken: claim.claim_token,
        }),
        null,
      );
      await a.finishRun(forged.id, { exitCode: 1, signal: null }, null);
      await a.finishRun(begun.run.id, { exitCode: 1, signal: null }, RALPH);
      const step = await b.stepRecord(P, 'step-1');
      assert.deepEqual(
        [step.status, step.claimed_by, step.claim_token],
        ['claimed', RALPH.worktree, claim.claim_token],
        "host b's claim is untouched",
      );
    });
  });
