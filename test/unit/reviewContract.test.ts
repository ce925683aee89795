// Review signals, verifications, the scheduler snapshot, PR mode and the merge's retrospective: the
// store's contract, through the Store interface only, on every backend (test/helpers/storeBackends.ts).
import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/core/clock.ts';
import { parsePlan } from '../../src/core/plan/parse.ts';
import type { PlanSource } from '../../src/core/plan/types.ts';
import type { Store } from '../../src/core/store/index.ts';
import type { VerificationEntry } from '../../src/core/store/runTypes.ts';
import type { Actor } from '../../src/core/store/types.ts';
import { contractBackends, type Backend } from '../helpers/storeBackends.ts';
import { planSourceOf } from '../../src/core/plan/source.ts';

const MARGE: Actor = { worktree: '/wt/main', agent: 'marge' };
const BART: Actor = { worktree: '/wt/review', agent: 'bart' };
const RALPH: Actor = { worktree: '/wt/build', agent: 'ralph' };
const P = 'plans/v.md';
const SOURCE: PlanSource = planSourceOf(
  P,
  parsePlan('# Plan: Review\n## Step 1: One\n- [ ] a\n## Step 2: Two\n**Depends on:** #step-1\n- [ ] b\n', P),
);
const BACKENDS: Backend[] = contractBackends();

async function implemented(store: Store, title = 'review the parser'): Promise<string> {
  const { id } = await store.createEpic({ title, brief: '', priority: 'P2' }, MARGE);
  for (const e of ['plan_approved', 'start', 'steps_completed'] as const) await store.applyEpicEvent(id, e, MARGE, e);
  return id;
}

const check = (
  epicId: string,
  runId: number | null,
  command: string,
  verdict: 'pass' | 'fail',
  exitCode: number | null = verdict === 'pass' ? 0 : 1,
): VerificationEntry => ({
  runId,
  epicId,
  planPath: P,
  stepAnchor: 'step-1',
  command,
  exitCode,
  verdict,
  durationMs: 12,
  outputTail: `${command} said ${verdict}`,
});

for (const backend of BACKENDS) {
  describe(`review contract on ${backend.name}`, () => {
    const open = (t: TestContext, clock = new ManualClock(Date.UTC(2026, 4, 1))) => ({
      store: backend.open(t, clock),
      clock,
    });

    test('a signal and its transition are stored together or not at all', async (t) => {
      const { store } = open(t);
      const id = await implemented(store);
      const before = JSON.stringify([await store.getEpic(id), await store.events(), await store.signals()]);
      // A location the schema refuses (no line) fails the insert after the transition was applied.
      const locations = [
        { file: 'src/a.ts', line: 1, endLine: null, note: 'fine' },
        { file: 'src/b.ts', line: null as unknown as number, endLine: 3, note: 'boom' },
      ];
      await assert.rejects(store.recordSignal(id, 'implementation_failure', 'broken', locations, BART));
      assert.equal(JSON.stringify([await store.getEpic(id), await store.events(), await store.signals()]), before);
      await assert.rejects(store.recordSignal(id, 'pass', '   ', [], BART), { code: 'missing_value' });
      const ok = await store.recordSignal(
        id,
        'implementation_failure',
        ' broken ',
        [
          { file: 'src/b.ts', line: 2, endLine: 3, note: 'real' },
          { file: 'src/a.ts', line: 9, endLine: null, note: null },
        ],
        BART,
      );
      assert.deepEqual(
        [
          ok.signal_id > 0,
          ok.type,
          ok.locations,
          ok.awaiting_person,
          ok.transition?.from,
          ok.transition?.to,
          ok.transition?.reason,
        ],
        [true, 'implementation_failure', 2, false, 'implemented', 'in_progress', 'implementation_failure: broken'],
      );
      const [listed] = await store.signals(id);
      assert.deepEqual(
        listed && [listed.id, listed.summary, listed.status, listed.created_by, listed.resolution, listed.locations],
        [
          ok.signal_id,
          'broken',
          'applied',
          'bart',
          null,
          [
            { file: 'src/b.ts', line: 2, end_line: 3, note: 'real' },
            { file: 'src/a.ts', line: 9, end_line: null, note: null },
          ],
        ],
      );
      const recorded = (await store.events({ epicId: id })).filter(
        (e) => e.action === 'signal_implementation_failure' || e.action === 'record',
      );
      assert.equal(recorded.length, 2);
      await assert.rejects(store.recordSignal(id, 'pass', 'not now', [], BART), { code: 'invalid_transition' });
    });

    test('a signal awaiting a person changes nothing until decided; it is decided once', async (t) => {
      const { store, clock } = open(t);
      const id = await implemented(store);
      const waiting = await store.recordSignal(id, 'option_viability_failure', 'wrong approach', [], BART, true);
      assert.deepEqual(
        [waiting.awaiting_person, waiting.transition, (await store.getEpic(id)).status],
        [true, null, 'implemented'],
      );
      assert.equal((await store.schedulerSnapshot()).epics.find((e) => e.id === id)?.signalsAwaitingPerson, 1);
      clock.advance(1000);
      const decided = await store.decideSignal(waiting.signal_id, 'send_back', MARGE, 'try the simple fix');
      assert.deepEqual(
        [decided.from, decided.to, decided.reason],
        ['implemented', 'in_progress', `signal #${waiting.signal_id} sent back to Ralph: try the simple fix`],
      );
      const [row] = await store.signals(id);
      assert.deepEqual(row && [row.status, row.resolved_at, row.resolved_by, row.resolution], [
        'decided',
        clock.now().toISOString(),
        'marge',
        'sent back to Ralph',
      ]);
      await assert.rejects(store.decideSignal(waiting.signal_id, 'accept', MARGE), {
        code: 'signal_closed',
        message: /already decided/,
      });
      const applied = await store.recordSignal(await implemented(store, 'another'), 'pass', 'fine', [], BART);
      await assert.rejects(store.decideSignal(applied.signal_id, 'accept', MARGE), {
        code: 'signal_closed',
        message: /already applied/,
      });
      await assert.rejects(store.decideSignal(99_999, 'accept', MARGE), { code: 'unknown_signal' });
      await assert.rejects(
        store.recordSignal(id, 'pass', 'too early', [], BART, true),
        { code: 'invalid_transition' },
        'an awaiting signal is checked against the table too',
      );
      assert.deepEqual(
        (await store.signals()).map((s) => s.id),
        [applied.signal_id, waiting.signal_id],
        'newest first',
      );
    });

    test('verification passes are stored in order; the snapshot reads their batches, the failure streak and an unverified build', async (t) => {
      const { store, clock } = open(t);
      const { id } = await store.createEpic({ title: 'verify the parser', brief: '', priority: 'P2' }, MARGE);
      await store.applyEpicEvent(id, 'plan_approved', MARGE, 'ok');
      await store.applyEpicEvent(id, 'start', MARGE, 'go');
      await store.initPlan(SOURCE, MARGE, { epicId: id });
      assert.equal(await store.lastVerdict(id), null);
      const build = async () => {
        clock.advance(1000);
        const r = await store.startRun(
          {
            epicId: id,
            planPath: null,
            stepAnchor: null,
            role: 'ralph',
            iteration: 1,
            worktree: RALPH.worktree,
            agentId: 'ralph',
            command: ['r'],
            pid: 1,
          },
          RALPH,
        );
        clock.advance(1000);
        await store.finishRun(r.id, { exitCode: 0, signal: null }, RALPH);
        return r.id;
      };
      const first = await build();
      let snap = (await store.schedulerSnapshot()).epics.find((e) => e.id === id);
      assert.deepEqual(
        [snap?.verification, snap?.planPath, snap?.steps],
        [
          { lastVerdict: null, sameFailureStreak: 0, running: false, unverifiedBuild: true },
          P,
          { total: 2, completed: 0, ready: ['step-1'], claimedLive: [] },
        ],
      );
      clock.advance(1000);
      await store.recordVerifications([
        check(id, first, 'lint', 'pass'),
        check(id, first, 'test', 'fail'),
        check(id, first, 'types', 'pass'),
      ]);
      assert.deepEqual(
        (await store.verifications({ epicId: id })).map((v) => [
          v.command,
          v.verdict,
          v.run_id,
          v.duration_ms,
          v.output_tail,
        ]),
        [
          ['types', 'pass', first, 12, 'types said pass'],
          ['test', 'fail', first, 12, 'test said fail'],
          ['lint', 'pass', first, 12, 'lint said pass'],
        ],
      );
      assert.equal(await store.lastVerdict(id), 'pass', 'the newest row');
      const second = await build();
      clock.advance(1000);
      await store.recordVerifications([check(id, second, 'test', 'fail')]);
      snap = (await store.schedulerSnapshot()).epics.find((e) => e.id === id);
      assert.deepEqual(snap?.verification, {
        lastVerdict: 'fail',
        sameFailureStreak: 2,
        running: false,
        unverifiedBuild: false,
      });
      const third = await build();
      clock.advance(1000);
      await store.recordVerifications([check(id, third, 'test', 'fail', 2)]);
      snap = (await store.schedulerSnapshot()).epics.find((e) => e.id === id);
      assert.equal(snap?.verification.sameFailureStreak, 1, 'a different exit code is a different failure');
      assert.deepEqual(
        (await store.verifications({ limit: 2 })).map((v) => v.run_id),
        [third, second],
      );
      await store.recordVerifications([]);
      assert.equal((await store.verifications()).length, 5);
    });

    test('the snapshot: faults in a row since a person acted, rework, review counts, setup, PR mode and other epics', async (t) => {
      const { store, clock } = open(t);
      const id = await implemented(store);
      const done = await implemented(store, 'already merged');
      await store.applyEpicEvent(done, 'signal_pass', BART, 'ok');
      await store.applyEpicEvent(done, 'merged', MARGE, 'merged');
      const run = async (role: 'bart' | 'ralph' | 'setup', exitCode: number, worktree = '/wt/e') => {
        clock.advance(1000);
        const r = await store.startRun(
          {
            epicId: id,
            planPath: null,
            stepAnchor: null,
            role,
            iteration: 1,
            worktree,
            agentId: role,
            command: [role],
            pid: 1,
          },
          MARGE,
        );
        clock.advance(1000);
        return store.finishRun(
          r.id,
          { exitCode, signal: null, outputTail: Array.from({ length: 12 }, (_, i) => `${role} line ${i}`).join('\n') },
          MARGE,
        );
      };
      await run('bart', 1);
      const last = await run('bart', 2);
      await run('setup', 0, '/wt/elsewhere');
      let snap = (await store.schedulerSnapshot()).epics.find((e) => e.id === id);
      assert.deepEqual(snap?.faults, {
        bart: {
          consecutive: 2,
          lastEndedAt: last.ended_at,
          lastRunId: last.id,
          lastOutcome: 'failed',
          lastExitCode: 2,
          lastReason: 'exit 2',
          lastOutput: Array.from({ length: 10 }, (_, i) => `bart line ${i + 2}`).join('\n'),
        },
      });
      assert.deepEqual(
        [snap?.review, snap?.setupDone, snap?.pullRequest, snap?.reworkPending],
        [{ signalsThisIteration: 0, bartRunsThisIteration: 2 }, false, null, false],
      );
      assert.deepEqual(
        (await store.schedulerSnapshot()).epics.map((e) => e.id),
        [id],
        'a done epic is not scheduled',
      );
      await store.recordSignal(id, 'implementation_failure', 'broken', [], BART);
      await store.recordSignal(await implemented(store, 'other'), 'pass', 'fine', [], BART);
      snap = (await store.schedulerSnapshot()).epics.find((e) => e.id === id);
      assert.deepEqual(
        [snap?.status, snap?.reworkPending, snap?.iteration],
        ['in_progress', true, 4],
        'two failed Bart runs and the send-back each counted one',
      );
      await run('ralph', 0);
      await store.applyEpicEvent(id, 'steps_completed', MARGE, 'again');
      await store.applyEpicEvent(id, 'signal_pass', BART, 'fine now');
      clock.advance(1000);
      await store.setPullRequest(id, 'https://example.com/pr/7', MARGE, { number: 7 });
      const opened = clock.now().toISOString();
      snap = (await store.schedulerSnapshot()).epics.find((e) => e.id === id);
      assert.deepEqual(
        [snap?.status, snap?.reworkPending, snap?.pullRequest],
        ['verified', false, { url: 'https://example.com/pr/7', checkedAt: opened }],
      );
      clock.advance(60_000);
      await store.markPullRequestChecked(id);
      assert.equal(
        (await store.schedulerSnapshot()).epics.find((e) => e.id === id)?.pullRequest?.checkedAt,
        clock.now().toISOString(),
      );
      const pr = (await store.events({ epicId: id })).find((e) => e.action === 'pr_opened');
      assert.deepEqual([pr?.reason, pr?.at], ['pull request https://example.com/pr/7', opened]);
      await store.recordWorktreeEvent(id, MARGE, 'tidied', 'removed stray files', { files: 2 });
      const tidied = (await store.events({ epicId: id })).at(-1);
      assert.deepEqual([tidied?.entity, tidied?.action, tidied?.reason], ['worktree', 'tidied', 'removed stray files']);
    });

    test('merging records the retrospective in the same transaction; the epic report gathers runs, verifications, signals and usage', async (t) => {
      const { store, clock } = open(t);
      const { id } = await store.createEpic({ title: 'retro on the parser', brief: '', priority: 'P2' }, MARGE);
      await store.applyEpicEvent(id, 'plan_approved', MARGE, 'ok');
      const approvedAt = clock.now().toISOString();
      await store.applyEpicEvent(id, 'start', MARGE, 'go');
      await store.initPlan(SOURCE, MARGE, { epicId: id });
      for (const [role, code] of [
        ['ralph', 1],
        ['ralph', 0],
        ['bart', 0],
        ['lisa', 0],
      ] as const) {
        const r = await store.startRun(
          {
            epicId: id,
            planPath: null,
            stepAnchor: null,
            role,
            iteration: 1,
            worktree: '/wt/e',
            agentId: role,
            command: [role],
            pid: 1,
          },
          MARGE,
        );
        await store.finishRun(
          r.id,
          {
            exitCode: code,
            signal: null,
            usage:
              role === 'bart'
                ? {
                    costUsd: 1,
                    inputTokens: 3,
                    outputTokens: 4,
                    cacheReadTokens: null,
                    cacheWriteTokens: null,
                    premiumRequests: null,
                  }
                : null,
          },
          MARGE,
        );
      }
      await store.recordVerifications([check(id, null, 'test', 'fail')]);
      await store.applyEpicEvent(id, 'steps_completed', MARGE, 'done');
      await store.recordSignal(id, 'pass', 'good', [{ file: 'src/x.ts', line: 4, endLine: null, note: null }], BART);
      clock.advance(90 * 60_000);
      const retro = await store.retrospective(id);
      const failedRun = (await store.runs({ epicId: id })).find((r) => r.status === 'failed');
      assert.deepEqual(retro, {
        epic_id: id,
        sessions: { bart: 1, lisa: 1, ralph: 2 },
        failed_runs: [{ id: failedRun?.id, role: 'ralph', step_anchor: null, outcome: 'failed', reason: 'exit 1' }],
        verification_failures: [{ command: 'test', exit_code: 1, step_anchor: 'step-1', at: approvedAt }],
        plan_versions: 0,
        build_iterations: 2,
        approved_at: approvedAt,
        merged_at: clock.now().toISOString(),
        approval_to_merge_minutes: 90,
      });
      const merged = await store.markMerged(id, MARGE, 'merged by Lovejoy');
      assert.deepEqual([merged.from, merged.to], ['verified', 'done']);
      const events = (await store.events({ epicId: id })).slice(-2);
      assert.deepEqual(
        events.map((e) => e.action),
        ['merged', 'retrospective'],
      );
      assert.match(events[1]?.reason ?? '', /ralph/);
      const logged = (await store.events()).length;
      await assert.rejects(store.markMerged(id, MARGE, 'twice'), { code: 'invalid_transition' });
      assert.equal((await store.events()).length, logged, 'a refused merge writes no retrospective');
      const report = await store.epicReport(id);
      assert.deepEqual(
        [
          report.read_at,
          report.epic.status,
          report.plan?.plan_path,
          report.runs.length,
          report.verifications.length,
          report.signals[0]?.locations.length,
          report.artifacts,
        ],
        [clock.now().toISOString(), 'done', P, 4, 1, 1, []],
      );
      assert.deepEqual(report.usage, [
        { epic_id: id, role: 'bart', runs: 1, cost_usd: 1, input_tokens: 3, output_tokens: 4 },
      ]);
      await assert.rejects(store.epicReport('sf-0000'), { code: 'unknown_epic' });
    });
  });
}
