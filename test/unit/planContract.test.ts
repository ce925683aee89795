// The plan-approval and epic-lifecycle contract on both backends (a temp SQLite file; a fresh
// PostgreSQL database), through the Store interface only: plan versions, the planning budget, drift
// between versions, the debt register, planning notes, handoffs, epic start and finish, context,
// reopen, showStep, commitTarget, prune and reconcile. Moved from test/unit/epicStore.test.ts.
import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../src/core/clock.ts';
import { parsePlan } from '../../src/core/plan/parse.ts';
import type { Store } from '../../src/core/store/index.ts';
import type { Actor } from '../../src/core/store/types.ts';
import { contractBackends, type Backend } from '../helpers/storeBackends.ts';
import { planSourceOf } from '../../src/core/plan/source.ts';

const LISA: Actor = { worktree: '/wt/main', agent: 'lisa' };
const MARGE: Actor = { worktree: '/wt/main', agent: 'marge' };
const RALPH: Actor = { worktree: '/wt/build', agent: 'ralph' };

function planText(steps: readonly string[], extra = ''): string {
  return `# Plan: Versions\n\n${steps.map((s, i) => `## Step ${i + 1}: ${s} {#step-${i + 1}}\n**Tasks:**\n- [ ] Do ${s}\n`).join('\n')}${extra}`;
}

function proposed(text: string, planPath = 'plans/v.md') {
  return { ...planSourceOf(planPath, parsePlan(text, planPath)), body: text };
}

const APPROACH =
  '# Plan: Cache\n\n## Intent\nFaster pages.\n\n## Approach\nAn LRU in front of the client.\n\n## Constraints\nNo new dependency.\n\n' +
  '## Step 1: Client {#step-1}\n- [ ] Write client\n\n### Step 1.1: Retries {#step-1-1}\n- [ ] Add retries\n\n## Step 2: Cache {#step-2}\n**Depends on:** #step-1\n- [ ] Add cache\n';

const BACKENDS: Backend[] = contractBackends();

for (const backend of BACKENDS) {
  describe(`plan and lifecycle contract on ${backend.name}`, () => {
    const open = (
      t: TestContext,
      clock = new ManualClock(Date.UTC(2026, 3, 1)),
    ): { store: Store; clock: ManualClock } => ({ store: backend.open(t, clock), clock });
    const actions = async (store: Store, epicId: string, entity: string) =>
      (await store.events({ epicId })).filter((e) => e.entity === entity).map((e) => e.action);

    /** An epic with APPROACH approved (ready) at plans/c.md. */
    async function approvedEpic(store: Store, title = 'Cache pages'): Promise<string> {
      const { id } = await store.createEpic({ title, brief: 'why', priority: 'P2' }, MARGE);
      await store.proposePlan(id, proposed(APPROACH, 'plans/c.md'), LISA);
      await store.approvePlan(id, proposed(APPROACH, 'plans/c.md'), MARGE);
      return id;
    }

    test('plan versions: a new proposal supersedes the pending one; decisions are kept; the latest is approved', async (t) => {
      const { store } = open(t);
      const { id } = await store.createEpic({ title: 'Versions', brief: 'why', priority: 'P2' }, MARGE);
      const v1 = await store.proposePlan(id, proposed(planText(['A'])), LISA);
      const v2 = await store.proposePlan(id, proposed(planText(['A', 'B'])), LISA);
      assert.deepEqual([v1.version, v2.version, v2.plan_iteration], [1, 2, 2]);
      await store.requestChanges(id, 'split B', MARGE);
      await assert.rejects(store.requestChanges(id, 'again', MARGE), { code: 'no_proposed_plan' });
      await store.proposePlan(id, proposed(planText(['A', 'B', 'C'])), LISA);
      const discarded = await store.discardPlan(id, MARGE, undefined, 'wrong direction');
      assert.deepEqual(
        [discarded.transition.from, discarded.transition.to],
        ['planned', 'deferred'],
        'a discarded plan sets the epic aside',
      );
      await assert.rejects(store.approvePlan(id, proposed(planText(['A'])), MARGE, 1), { code: 'not_proposed' });
      await assert.rejects(store.proposePlan(id, proposed(planText(['A'])), LISA), { code: 'invalid_transition' });
      await store.applyEpicEvent(id, 'resume', MARGE, 'a new direction');
      const v4Text = planText(['A', 'B1', 'B2']);
      await store.proposePlan(id, proposed(v4Text), LISA);
      await assert.rejects(store.approvePlan(id, proposed(v4Text), LISA), { code: 'self_approval' });
      const approved = await store.approvePlan(id, proposed(v4Text), MARGE);
      assert.equal(approved.version, 4);
      const versions = await store.planVersions(id);
      assert.deepEqual(
        versions.map((v) => [v.version, v.status, v.feedback]),
        [
          [1, 'superseded', null],
          [2, 'changes_requested', 'split B'],
          [3, 'discarded', 'wrong direction'],
          [4, 'approved', null],
        ],
      );
      assert.equal(versions[3]?.body, v4Text);
      assert.equal(versions[3]?.plan_hash, approved.plan_hash);
      assert.equal(versions[3]?.proposed_agent, 'lisa');
      const epic = await store.getEpic(id);
      assert.deepEqual([epic.status, epic.plan_iteration], ['ready', 4]);
      assert.deepEqual(await actions(store, id, 'plan_version'), [
        'propose',
        'propose',
        'request_changes',
        'propose',
        'discard',
        'propose',
        'approve',
      ]);

      const other = await store.createEpic({ title: 'Other', brief: '', priority: 'P2' }, MARGE);
      await assert.rejects(store.proposePlan(other.id, proposed(planText(['X'])), LISA), { code: 'plan_owned' });
    });

    test('the planning budget: a trivial epic takes two proposals, the third is refused', async (t) => {
      const { store } = open(t);
      const { id } = await store.createEpic({ title: 'fix typo', brief: '', priority: 'P2' }, MARGE);
      await store.proposePlan(id, proposed(planText(['A']), 'plans/t.md'), LISA);
      await store.proposePlan(id, proposed(planText(['A', 'B']), 'plans/t.md'), LISA);
      await assert.rejects(store.proposePlan(id, proposed(planText(['A', 'B', 'C']), 'plans/t.md'), LISA), {
        code: 'plan_budget_exhausted',
      });
      assert.equal((await store.planVersions(id)).length, 2);
    });

    test('the changes between versions are described; ticking boxes and re-wrapping prose are not changes', async (t) => {
      const { store } = open(t);
      const { id } = await store.createEpic({ title: 'Diff', brief: '', priority: 'P2' }, MARGE);
      const base =
        '# Plan: Diff\n\n## Approach\nShort.\n\n## Step 1: Client {#step-1}\n**Tasks:**\n- [ ] Write client\n- [ ] Add retries\n\n## Step 2: Cache {#step-2}\n**Tasks:**\n- [ ] Add cache\n';
      await store.proposePlan(id, proposed(base, 'plans/d.md'), LISA);
      const changed =
        base
          .replace('Step 1: Client', 'Step 1: HTTP client')
          .replace('- [ ] Add retries\n', '- [ ] Add backoff\n')
          .replace('## Step 2: Cache {#step-2}\n', '## Step 2: Cache {#step-2}\n**Depends on:** #step-1\n') +
        '\n## Step 3: Docs {#step-3}\n**Tests:**\n- [ ] Docs build\n';
      const v2 = await store.proposePlan(id, proposed(changed, 'plans/d.md'), LISA);
      assert.deepEqual(v2.changes_since_previous, [
        'step-1 title changed: "Client" → "HTTP client"',
        'step-1 task removed: "Add retries"',
        'step-1 task added: "Add backoff"',
        'step-2 dependencies changed: none → step-1',
        'step-3 added',
      ]);
      const cosmetic = changed
        .replace('- [ ] Write client', '- [x] Write client')
        .replace('Short.', 'Short,\nbut now wrapped.');
      const v3 = await store.proposePlan(id, proposed(cosmetic, 'plans/d.md'), LISA);
      assert.deepEqual(v3.changes_since_previous, []);
      assert.equal(v3.plan_hash, v2.plan_hash);
      const propose = (await store.events({ epicId: id })).filter((e) => e.action === 'propose');
      assert.deepEqual((propose[1]?.data as { changes: string[] }).changes, v2.changes_since_previous);
    });

    test('pendingPlanVersion names the version a decision applies to, refusing an unknown or decided one', async (t) => {
      const { store } = open(t);
      const { id } = await store.createEpic({ title: 'Pending', brief: '', priority: 'P2' }, MARGE);
      await assert.rejects(store.pendingPlanVersion(id), { code: 'no_proposed_plan', category: 'refused' });
      await store.proposePlan(id, proposed(planText(['A']), 'plans/p.md'), LISA);
      await store.proposePlan(id, proposed(planText(['A', 'B']), 'plans/p.md'), LISA);
      assert.equal((await store.pendingPlanVersion(id)).version, 2);
      await assert.rejects(store.pendingPlanVersion(id, 1), { code: 'not_proposed' });
      await assert.rejects(store.pendingPlanVersion(id, 9), { code: 'unknown_version', category: 'usage' });
      await assert.rejects(store.pendingPlanVersion('sf-0000'), { code: 'unknown_epic' });
      await assert.rejects(store.requestChanges(id, '  ', MARGE), { code: 'missing_value' });
      await assert.rejects(store.approvePlan(id, proposed(planText(['A', 'B']), 'plans/other.md'), MARGE), {
        code: 'wrong_plan',
      });
      await assert.rejects(
        store.approvePlan(id, proposed(planText(['A', 'C']), 'plans/p.md'), MARGE),
        (err: Error & { code?: string }) => {
          assert.equal(err.code, 'plan_drift');
          assert.match(
            err.message,
            /^plans\/p\.md changed since version 2 was proposed \(step-2 title changed: "B" → "C"/,
          );
          return true;
        },
      );
      assert.equal((await store.getEpic(id)).status, 'planned', 'refusals changed nothing');
    });

    test('the debt register: a discarded plan and a deferral are open debt until a person resumes the epic', async (t) => {
      const { store, clock } = open(t);
      const a = await store.createEpic({ title: 'Set aside', brief: '', priority: 'P2' }, MARGE);
      const b = await store.createEpic({ title: 'Deferred', brief: '', priority: 'P1' }, MARGE);
      await store.proposePlan(a.id, proposed(planText(['A']), 'plans/a.md'), LISA);
      await store.discardPlan(a.id, MARGE, undefined, 'not now');
      clock.advance(1000);
      await store.applyEpicEvent(b.id, 'defer', MARGE, 'waiting on design');
      const open1 = await store.debt();
      assert.deepEqual(
        open1.map((d) => [d.epic_id, d.title, d.event, d.from_status, d.reason, d.recorded_by, d.resolved_at]),
        [
          [b.id, 'Deferred', 'defer', 'planned', 'waiting on design', 'marge', null],
          [a.id, 'Set aside', 'plan_discarded', 'planned', 'plan v1 discarded: not now', 'marge', null],
        ],
      );
      clock.advance(1000);
      await store.applyEpicEvent(a.id, 'resume', MARGE, 'back on');
      assert.deepEqual(
        (await store.debt()).map((d) => d.epic_id),
        [b.id],
      );
      const all = await store.debt({ all: true });
      const closed = all.find((d) => d.epic_id === a.id);
      assert.deepEqual(
        [all.length, closed?.resolved_at, closed?.resolution],
        [2, clock.now().toISOString(), 'back on'],
      );
    });

    test('planning notes are recorded (cut to 2000 characters) with an event, and shown in the next context oldest first', async (t) => {
      const { store } = open(t);
      const { id } = await store.createEpic({ title: 'Research', brief: 'find out', priority: 'P2' }, MARGE);
      const first = await store.recordPlanningNote(id, 'finding', '  the API pages at 100  ', LISA);
      await store.recordPlanningNote(id, 'risk', 'x'.repeat(2500), LISA);
      assert.deepEqual([first.kind, first.summary, first.recorded_by], ['finding', 'the API pages at 100', 'lisa']);
      await assert.rejects(store.recordPlanningNote(id, 'finding', '   ', LISA), { code: 'missing_value' });
      await assert.rejects(store.recordPlanningNote('sf-0000', 'finding', 'x', LISA), { code: 'unknown_epic' });
      const note = (await store.events({ epicId: id })).at(-1);
      assert.deepEqual(
        [note?.entity, note?.action, note?.reason, (note?.data as { kind: string }).kind],
        ['planning_note', 'record', 'x'.repeat(200), 'risk'],
      );
      const ctx = await store.context({ epicId: id, actor: LISA, docsRoot: null, role: 'lisa' });
      assert.deepEqual(
        ctx.research.map((n) => [n.kind, n.summary.length]),
        [
          ['finding', 20],
          ['risk', 2000],
        ],
      );
    });

    test('handoffText and epicPlans: nothing before approval; then the approved version, its handoff and the live plan', async (t) => {
      const { store } = open(t);
      const { id } = await store.createEpic({ title: 'Cache pages', brief: 'why', priority: 'P2' }, MARGE);
      assert.equal(await store.handoffText(id), null);
      assert.deepEqual(await store.epicPlans(id), { livePlanPath: null, approved: null });
      await store.proposePlan(id, proposed(APPROACH, 'plans/c.md'), LISA);
      assert.equal(await store.handoffText(id), null, 'a proposal is no handoff');
      await store.approvePlan(id, proposed(APPROACH, 'plans/c.md'), MARGE);
      const handoff = await store.handoffText(id);
      assert.match(handoff ?? '', /An LRU in front of the client\./);
      assert.match(handoff ?? '', /No new dependency\./);
      const plans = await store.epicPlans(id);
      assert.deepEqual(
        [
          plans.livePlanPath,
          plans.approved?.planPath,
          plans.approved?.version,
          plans.approved?.body,
          plans.approved?.handoff,
        ],
        ['plans/c.md', 'plans/c.md', 1, APPROACH, handoff],
      );
      await assert.rejects(store.handoffText('sf-0000'), { code: 'unknown_epic' });
    });

    test('startEpic needs the approved plan unchanged; changesSinceInit names the changes; finishEpic needs every step completed', async (t) => {
      const { store } = open(t);
      const { id } = await store.createEpic({ title: 'Start', brief: '', priority: 'P2' }, MARGE);
      await assert.rejects(store.startEpic(id, planSourceOf('plans/c.md', parsePlan(APPROACH, 'plans/c.md')), RALPH), {
        code: 'no_approved_plan',
      });
      await store.proposePlan(id, proposed(APPROACH, 'plans/c.md'), LISA);
      await store.approvePlan(id, proposed(APPROACH, 'plans/c.md'), MARGE);
      const current = planSourceOf('plans/c.md', parsePlan(APPROACH, 'plans/c.md'));
      const drifted = APPROACH.replace('Step 2: Cache', 'Step 2: Memo');
      const driftedSource = planSourceOf('plans/c.md', parsePlan(drifted, 'plans/c.md'));
      assert.deepEqual(await store.changesSinceInit('plans/c.md', current), []);
      assert.deepEqual(
        await store.changesSinceInit(
          'plans/c.md',
          planSourceOf('plans/c.md', parsePlan(APPROACH.replace('- [ ] Add cache', '- [x] Add cache'), 'plans/c.md')),
        ),
        [],
        'a ticked box is no drift',
      );
      assert.deepEqual(await store.changesSinceInit('plans/c.md', driftedSource), [
        'step-2 title changed: "Cache" → "Memo"',
      ]);
      assert.deepEqual(await store.changesSinceInit('plans/none.md', current), ['plans/none.md is not initialised']);
      await assert.rejects(store.startEpic(id, driftedSource, RALPH), (err: Error & { code?: string }) => {
        assert.equal(err.code, 'plan_drift');
        assert.match(
          err.message,
          /^plans\/c\.md differs from the approved plan \(step-2 title changed: "Cache" → "Memo"\)/,
        );
        return true;
      });
      await assert.rejects(store.startEpic(id, planSourceOf('plans/x.md', parsePlan(APPROACH, 'plans/x.md')), RALPH), {
        code: 'wrong_plan',
      });
      const started = await store.startEpic(id, current, RALPH);
      assert.deepEqual(
        [started.from, started.to, started.iteration, started.reason],
        ['ready', 'in_progress', 1, 'started on approved plan plans/c.md v1'],
      );
      await assert.rejects(store.finishEpic(id, RALPH, 'done'), (err: Error & { code?: string }) => {
        assert.equal(err.code, 'incomplete');
        assert.equal(err.message, `cannot finish ${id}: steps not completed: step-1, step-1-1, step-2`);
        return true;
      });
      for (const anchor of ['step-1', 'step-2']) {
        const c = await store.claimNext(current, RALPH);
        assert.ok(c.claimed && c.step_anchor === anchor);
        await store.complete(current, anchor, { ...RALPH, token: c.claim_token }, { forceReason: 'contract' });
      }
      await assert.rejects(
        store.finishEpic(id, RALPH, 'x', { verificationConfigured: true }),
        (err: Error & { code?: string }) => {
          assert.equal(err.code, 'unverified');
          assert.equal(
            err.message,
            `cannot finish ${id}: verification is configured and has not passed since its latest build; let the scheduler verify it (springfield orchestrate)`,
          );
          return true;
        },
      );
      assert.equal((await store.getEpic(id)).status, 'in_progress', 'the refusal changed nothing');
      const finished = await store.finishEpic(id, RALPH, 'all steps verified');
      assert.deepEqual(
        [finished.from, finished.to, finished.reason],
        ['in_progress', 'implemented', 'all steps verified'],
      );
      const planless = await store.createEpic({ title: 'No plan', brief: '', priority: 'P2' }, MARGE);
      await assert.rejects(store.finishEpic(planless.id, RALPH, 'x'), { code: 'no_approved_plan' });
    });

    /** An epic in progress on a one-step plan, a build (a successful Ralph run completing the step once) and a verification pass. */
    async function builtEpic(t: TestContext) {
      const { store, clock } = open(t);
      const epic = await store.createEpic({ title: 'Finish me', brief: '', priority: 'P2' }, MARGE);
      const text = '# Plan: Finish\n\n## Step 1: Only {#step-1}\n- [ ] do it\n';
      const source = planSourceOf('plans/finish.md', parsePlan(text, 'plans/finish.md'));
      await store.initPlan(source, MARGE, { epicId: epic.id });
      await store.applyEpicEvent(epic.id, 'plan_approved', MARGE, 'ok');
      await store.applyEpicEvent(epic.id, 'start', MARGE, 'go');
      const ralph: Actor = { worktree: `/repo.springfield/${epic.id}`, agent: 'ralph' };
      const build = async () => {
        clock.advance(1000);
        const claim = await store.claimNext(source, ralph);
        const holder = claim.claimed ? { ...ralph, token: claim.claim_token } : ralph;
        const run = await store.startRun(
          {
            epicId: epic.id,
            planPath: source.planPath,
            stepAnchor: 'step-1',
            role: 'ralph',
            iteration: 1,
            worktree: ralph.worktree,
            agentId: 'ralph',
            command: ['ralph'],
            pid: process.pid,
          },
          holder,
        );
        if (claim.claimed) {
          await store.updateItems(source, 'step-1', [{ selector: { all: true }, status: 'completed' }], holder);
          await store.complete(source, 'step-1', holder);
        }
        clock.advance(1000);
        await store.finishRun(
          run.id,
          { exitCode: 0, signal: null, headAfter: `commit-${clock.now().getTime()}` },
          holder,
        );
      };
      const verify = async (verdict: 'pass' | 'fail') => {
        clock.advance(1000);
        await store.recordVerifications([
          {
            runId: null,
            epicId: epic.id,
            planPath: source.planPath,
            stepAnchor: null,
            command: 'npm test',
            exitCode: verdict === 'pass' ? 0 : 1,
            verdict,
            durationMs: 5,
            outputTail: '',
          },
        ]);
      };
      const dump = async () =>
        JSON.stringify([await store.getEpic(epic.id), await store.events(), await store.debt({ all: true })]);
      return { store, id: epic.id, build, verify, dump };
    }

    test('finishEpic applies the completion rule: refused while verification is configured and not passed since the latest build, or failed; nothing written', async (t) => {
      const unverified = await builtEpic(t);
      await unverified.build();
      let before = await unverified.dump();
      await assert.rejects(
        unverified.store.finishEpic(unverified.id, MARGE, 'by hand', { verificationConfigured: true }),
        {
          code: 'unverified',
          category: 'refused',
          message: new RegExp(
            `^cannot finish ${unverified.id}: verification is configured and has not passed since its latest build; `,
          ),
        },
      );
      assert.equal(await unverified.dump(), before);
      assert.equal(
        (await unverified.store.finishEpic(unverified.id, MARGE, 'by hand')).to,
        'implemented',
        'without verification configured or recorded, finish needs only the steps',
      );

      const failed = await builtEpic(t);
      await failed.build();
      await failed.verify('fail');
      before = await failed.dump();
      await assert.rejects(
        failed.store.finishEpic(failed.id, MARGE, 'by hand'),
        {
          code: 'verification_failed',
          message: new RegExp(`^cannot finish ${failed.id}: its latest verification failed: npm test exited 1; `),
        },
        'even with no config saying so: verification is in use',
      );
      assert.equal(await failed.dump(), before);

      const rebuilt = await builtEpic(t);
      await rebuilt.build();
      await rebuilt.verify('pass');
      await rebuilt.build();
      await assert.rejects(
        rebuilt.store.finishEpic(rebuilt.id, MARGE, 'by hand'),
        { code: 'unverified', message: /has not passed since its latest build/ },
        'a pass before another build is not a pass for it',
      );
      await rebuilt.verify('pass');
      const done = await rebuilt.store.finishEpic(rebuilt.id, MARGE, 'verified by hand', {
        verificationConfigured: true,
      });
      assert.deepEqual([done.from, done.to], ['in_progress', 'implemented']);
    });

    test('init refuses a drifted plan without --force, naming the change, and writes nothing (as claim does)', async (t) => {
      const { store } = open(t);
      await approvedEpic(store);
      const before = (await store.events()).length;
      const hash = (await store.plan('plans/c.md')).plan_hash;
      const drifted = planSourceOf(
        'plans/c.md',
        parsePlan(APPROACH.replace('Step 2: Cache', 'Step 2: Memo'), 'plans/c.md'),
      );
      await assert.rejects(store.initPlan(drifted, MARGE), (err: Error & { code?: string }) => {
        assert.equal(err.code, 'plan_drift');
        assert.equal(
          err.message,
          `plans/c.md: plan changed since init (step-2 title changed: "Cache" → "Memo"); re-initialise with 'springfield init --force plans/c.md'`,
        );
        return true;
      });
      assert.deepEqual(
        [(await store.events()).length, (await store.plan('plans/c.md')).plan_hash],
        [before, hash],
        'no event, the stored plan unchanged',
      );
      assert.equal((await store.initPlan(drifted, MARGE, { force: true })).reinitialized, true);
    });

    test('setEpicWorktree records where the epic is built', async (t) => {
      const { store, clock } = open(t);
      const id = await approvedEpic(store);
      clock.advance(5000);
      await store.setEpicWorktree(id, '/wt/cache', 'sf/cache');
      const epic = await store.getEpic(id);
      assert.deepEqual(
        [epic.worktree_path, epic.branch, epic.updated_at],
        ['/wt/cache', 'sf/cache', clock.now().toISOString()],
      );
      await store.forgetEpicWorktree(id, '/wt/other');
      assert.equal((await store.getEpic(id)).worktree_path, '/wt/cache', 'another path: kept');
      const set = clock.now().toISOString();
      clock.advance(5000);
      await store.forgetEpicWorktree(id, '/wt/cache');
      const gone = await store.getEpic(id);
      assert.deepEqual(
        [gone.worktree_path, gone.branch, gone.updated_at],
        [null, 'sf/cache', set],
        'a removed worktree is forgotten; its branch name stays, and so does when the epic last changed (a merged row says when it merged, not when it was pruned)',
      );
    });

    test('showStep reads one step with its substeps, items and dependencies; unknown ones are usage errors', async (t) => {
      const { store } = open(t);
      await approvedEpic(store);
      const plans = await store.showPlans('plans/c.md');
      const step1 = await store.showStep('plans/c.md', 'step-1');
      assert.deepEqual(step1, plans[0]?.steps[0], 'the same view as show of the whole plan');
      const step2 = await store.showStep('plans/c.md', 'step-2');
      assert.deepEqual(
        [step2.depends_on, step2.blocked_by, step2.items.map((i) => i.text)],
        [['step-1'], ['step-1'], ['Add cache']],
      );
      const sub = await store.showStep('plans/c.md', 'step-1-1');
      assert.deepEqual([sub.anchor, sub.parent_anchor, sub.substeps.length], ['step-1-1', 'step-1', 0]);
      await assert.rejects(store.showStep('plans/c.md', 'nope'), { code: 'unknown_step', category: 'usage' });
      await assert.rejects(store.showStep('plans/none.md', 'step-1'), { code: 'unknown_plan', category: 'usage' });
    });

    test('commitTarget: the named step, the one plan that has it, or the single step the worktree holds', async (t) => {
      const { store } = open(t);
      const id = await approvedEpic(store);
      const c = planSourceOf('plans/c.md', parsePlan(APPROACH, 'plans/c.md'));
      await store.startEpic(id, c, RALPH);
      const other = planSourceOf(
        'plans/o.md',
        parsePlan('# Plan: O\n## Step 1: One {#step-1}\n- [ ] a\n## Step 9: Nine {#step-9}\n- [ ] n\n', 'plans/o.md'),
      );
      await store.initPlan(other, MARGE);
      const q = { worktree: RALPH.worktree, agent: RALPH.agent };
      await assert.rejects(store.commitTarget(q), { code: 'no_claimed_step' });
      assert.deepEqual(await store.commitTarget({ ...q, step: 'step-9' }), {
        planPath: 'plans/o.md',
        anchor: 'step-9',
      });
      assert.deepEqual(await store.commitTarget({ ...q, step: 'step-1', planPath: 'plans/c.md' }), {
        planPath: 'plans/c.md',
        anchor: 'step-1',
      });
      await assert.rejects(store.commitTarget({ ...q, step: 'step-1' }), { code: 'ambiguous_step' });
      await assert.rejects(store.commitTarget({ ...q, step: 'step-7' }), { code: 'unknown_step' });
      const claim = await store.claimNext(c, RALPH);
      assert.ok(claim.claimed);
      assert.deepEqual(await store.commitTarget(q), { planPath: 'plans/c.md', anchor: 'step-1' });
      assert.deepEqual(
        await store.commitTarget({ ...q, step: 'step-1' }),
        { planPath: 'plans/c.md', anchor: 'step-1' },
        'the held plan settles an ambiguous anchor',
      );
      assert.deepEqual(await store.commitTarget({ ...q, step: 'step-1-1' }), {
        planPath: 'plans/c.md',
        anchor: 'step-1-1',
      });
      await assert.rejects(store.commitTarget({ worktree: '/wt/else', agent: null }), { code: 'no_claimed_step' });
      await assert.rejects(store.commitTarget({ ...q, agent: 'someone-else' }), { code: 'no_claimed_step' });
      await store.claimNext(other, RALPH);
      await assert.rejects(store.commitTarget(q), (err: Error & { code?: string }) => {
        assert.equal(err.code, 'ambiguous_step');
        assert.equal(
          err.message,
          `${RALPH.worktree} holds 2 steps (plans/c.md step-1, plans/o.md step-1): pass --step ANCHOR and --plan PATH`,
        );
        return true;
      });
    });

    if (backend.name === 'postgres') {
      test('a holder is per host: the same worktree path on another host holds nothing for commitTarget or context here', async (t) => {
        const { store, clock } = open(t);
        const hostB = backend.open(t, clock, { host: 'host-b', shareWith: store });
        const id = await approvedEpic(store);
        const c = planSourceOf('plans/c.md', parsePlan(APPROACH, 'plans/c.md'));
        await store.startEpic(id, c, RALPH);
        const claim = await hostB.claimNext(c, RALPH);
        assert.ok(claim.claimed);
        const q = { worktree: RALPH.worktree, agent: RALPH.agent };
        assert.deepEqual(await hostB.commitTarget(q), { planPath: 'plans/c.md', anchor: 'step-1' });
        await assert.rejects(store.commitTarget(q), { code: 'no_claimed_step' });
        assert.equal((await hostB.context({ actor: RALPH, docsRoot: null })).step?.anchor, 'step-1');
        assert.equal((await store.context({ actor: RALPH, docsRoot: null })).step, null);
      });
    }

    test('context: the epic, its held step, the approved approach, feedback on a sent-back version and recent signals', async (t) => {
      const { store } = open(t);
      const { id } = await store.createEpic({ title: 'Context', brief: 'the intent', priority: 'P2' }, MARGE);
      await store.proposePlan(id, proposed(APPROACH, 'plans/c.md'), LISA);
      await store.requestChanges(id, 'smaller steps', MARGE);
      const planner = await store.context({ epicId: id, actor: LISA, docsRoot: null, role: 'lisa' });
      assert.deepEqual(
        [
          planner.epic?.id,
          planner.intent,
          planner.plan,
          planner.previous_proposal?.plan_path,
          planner.previous_proposal?.feedback,
          planner.previous_proposal?.version,
        ],
        [id, 'the intent', null, 'plans/c.md', 'smaller steps', 1],
      );
      assert.deepEqual(
        planner.feedback.map((f) => [f.version, f.feedback]),
        [[1, 'smaller steps']],
      );
      await store.proposePlan(id, proposed(APPROACH, 'plans/c.md'), LISA);
      await store.approvePlan(id, proposed(APPROACH, 'plans/c.md'), MARGE);
      const c = planSourceOf('plans/c.md', parsePlan(APPROACH, 'plans/c.md'));
      await store.startEpic(id, c, RALPH);
      const claim = await store.claimNext(c, RALPH);
      assert.ok(claim.claimed);
      await store.recordArtifact('plans/c.md', 'step-1', 'decision', 'chose LRU', RALPH);
      const builder = await store.context({ actor: RALPH, docsRoot: null });
      assert.deepEqual(
        [
          builder.epic?.id,
          builder.plan?.plan_path,
          builder.step?.anchor,
          builder.step?.held_by_you,
          builder.approach,
          builder.previous_proposal,
        ],
        [id, 'plans/c.md', 'step-1', true, 'An LRU in front of the client.', null],
      );
      assert.ok(
        builder.decisions.some((d) => d.summary === 'chose LRU'),
        JSON.stringify(builder.decisions),
      );
      const other = await store.context({ epicId: id, stepAnchor: 'step-2', actor: MARGE, docsRoot: null });
      assert.deepEqual([other.step?.anchor, other.step?.held_by_you], ['step-2', false]);
      await assert.rejects(store.context({ epicId: id, stepAnchor: 'nope', actor: MARGE, docsRoot: null }), {
        code: 'unknown_step',
      });
    });

    test('reopen: a completed step goes back to pending, its claimed dependent is fenced, the plan is active again', async (t) => {
      const { store } = open(t);
      const id = await approvedEpic(store);
      const c = planSourceOf('plans/c.md', parsePlan(APPROACH, 'plans/c.md'));
      await store.startEpic(id, c, RALPH);
      const first = await store.claimNext(c, RALPH);
      assert.ok(first.claimed);
      await store.complete(c, 'step-1', { ...RALPH, token: first.claim_token }, { forceReason: 'contract' });
      const second = await store.claimNext(c, LISA);
      assert.ok(second.claimed && second.step_anchor === 'step-2');
      await assert.rejects(store.reopen('plans/c.md', 'step-2', MARGE, 'x'), { code: 'not_completed' });
      const r = await store.reopen('plans/c.md', 'step-1', MARGE, 'completed by mistake');
      assert.deepEqual(
        [r.steps_reopened, r.status, r.previous_completer, r.plan_reopened],
        [['step-1'], 'pending', RALPH.worktree, false],
      );
      assert.deepEqual(r.dependents_fenced, [
        { step_anchor: 'step-2', previous_holder: LISA.worktree, claim_token: second.claim_token + 1 },
      ]);
      await assert.rejects(store.heartbeat('plans/c.md', 'step-2', { ...LISA, token: second.claim_token }), {
        code: 'not_claimed',
      });
      const ready = await store.ready('plans/c.md');
      assert.deepEqual([ready.ready_steps, ready.blocked_steps], [['step-1'], ['step-2']]);
      const again = await store.claimNext(c, RALPH);
      assert.ok(
        again.claimed && again.step_anchor === 'step-1' && again.claim_token === first.claim_token + 2,
        'reopening fenced the old token; the new claim takes the next',
      );
      const reopenEvent = (await store.events({ planPath: 'plans/c.md' })).filter((e) => e.action === 'reopen').at(-1);
      assert.deepEqual(
        [
          reopenEvent?.step_anchor,
          reopenEvent?.reason,
          (reopenEvent?.data as { previous_completer: string }).previous_completer,
        ],
        ['step-1', 'completed by mistake', RALPH.worktree],
      );
    });

    test("an epic's events include every event of its plan's steps (claim, reset, complete carry no epic id), and no other plan's", async (t) => {
      const { store } = open(t);
      const id = await approvedEpic(store);
      const c = planSourceOf('plans/c.md', parsePlan(APPROACH, 'plans/c.md'));
      const loose = planSourceOf('plans/loose.md', parsePlan(planText(['Loose']), 'plans/loose.md'));
      await store.initPlan(loose, MARGE);
      await store.startEpic(id, c, RALPH);
      const first = await store.claimNext(c, RALPH);
      assert.ok(first.claimed && first.step_anchor === 'step-1');
      await store.reset('plans/c.md', 'step-1', MARGE, 'stuck');
      const second = await store.claimNext(c, RALPH);
      assert.ok(second.claimed && second.step_anchor === 'step-1');
      await store.complete(c, 'step-1', { ...RALPH, token: second.claim_token }, { forceReason: 'contract' });
      const elsewhere = await store.claimNext(loose, RALPH);
      assert.ok(elsewhere.claimed);

      const steps = (
        events: { entity: string; action: string; plan_path: string | null; step_anchor: string | null }[],
      ) => events.filter((e) => e.entity === 'step').map((e) => `${e.plan_path} ${e.step_anchor} ${e.action}`);
      const ofEpic = await store.events({ epicId: id });
      assert.deepEqual(
        steps(ofEpic),
        steps(await store.events({ planPath: 'plans/c.md' })),
        "every step event of the epic's plan, and only those",
      );
      assert.deepEqual(
        steps(ofEpic).filter((e) => e.startsWith('plans/c.md step-1 ')),
        ['plans/c.md step-1 claim', 'plans/c.md step-1 reset', 'plans/c.md step-1 claim', 'plans/c.md step-1 complete'],
      );
      assert.ok(
        ofEpic.some((e) => e.entity === 'epic' && e.action === 'start'),
        "and the epic's own events",
      );
      assert.deepEqual(
        steps(await store.events({ epicId: id, stepAnchor: 'step-1' })),
        steps(ofEpic).filter((e) => e.startsWith('plans/c.md step-1 ')),
        '--epic with --step',
      );

      const root = mkdtempSync(join(tmpdir(), 'sf-prune-'));
      t.after(() => rmSync(root, { recursive: true, force: true }));
      assert.deepEqual((await store.prunePlans([root], MARGE, { dryRun: false })).pruned, [
        'plans/c.md',
        'plans/loose.md',
      ]);
      assert.deepEqual(
        steps(await store.events({ epicId: id })),
        steps(ofEpic),
        "a pruned plan's step events still belong to its epic",
      );
    });

    test('reconcile completes steps from commit trailers once, keeps a conflicting hash unless forced, and finishes the plan', async (t) => {
      const { store } = open(t);
      const plan = planSourceOf(
        'plans/r.md',
        parsePlan(
          '# Plan: R\n## Step 1: A {#step-1}\n- [ ] a\n### Step 1.1: Sub {#step-1-1}\n- [ ] s\n## Step 2: B {#step-2}\n- [ ] b\n',
          'plans/r.md',
        ),
      );
      await store.initPlan(plan, MARGE);
      const held = await store.claimNext(plan, RALPH);
      assert.ok(held.claimed);
      const trailers = [
        { commit_hash: 'bbbb2222', plan_path: 'plans/r.md', step_anchor: 'step-1' },
        { commit_hash: 'aaaa1111', plan_path: 'plans/r.md', step_anchor: 'step-1' },
        { commit_hash: 'cccc3333', plan_path: 'plans/none.md', step_anchor: 'step-1' },
        { commit_hash: 'dddd4444', plan_path: 'plans/r.md', step_anchor: 'step-9' },
      ];
      const r1 = await store.reconcileTrailers(trailers, MARGE, { force: false });
      assert.deepEqual(r1.reconciled, [
        {
          plan_path: 'plans/r.md',
          step_anchor: 'step-1',
          commit_hash: 'bbbb2222',
          from_status: 'claimed',
          previous_hash: null,
        },
      ]);
      assert.deepEqual(
        r1.unknown.map((u) => u.reason),
        ['unknown_plan', 'unknown_step'],
      );
      assert.deepEqual([r1.unchanged, r1.plans_completed, r1.conflicts], [0, [], []]);
      const step1 = await store.showStep('plans/r.md', 'step-1');
      assert.deepEqual(
        [
          step1.status,
          step1.commit_hash,
          step1.substeps[0]?.status,
          step1.items.every((i) => i.status === 'completed'),
        ],
        ['completed', 'bbbb2222', 'completed', true],
      );
      const record = await store.stepRecord('plans/r.md', 'step-1');
      assert.deepEqual(
        [record.completed_by, record.completed_token],
        [RALPH.worktree, held.claim_token],
        'the holder keeps authorship',
      );
      const r2 = await store.reconcileTrailers(
        [{ commit_hash: 'bbbb2222ffff', plan_path: 'plans/r.md', step_anchor: 'step-1' }],
        MARGE,
        { force: false },
      );
      assert.deepEqual([r2.unchanged, r2.reconciled.length], [1, 0], 'an abbreviated hash names the same commit');
      const r3 = await store.reconcileTrailers(
        [
          { commit_hash: 'eeee5555', plan_path: 'plans/r.md', step_anchor: 'step-1' },
          { commit_hash: 'ffff6666', plan_path: 'plans/r.md', step_anchor: 'step-2' },
        ],
        MARGE,
        { force: false },
      );
      assert.deepEqual(r3.conflicts, [
        {
          plan_path: 'plans/r.md',
          step_anchor: 'step-1',
          db_hash: 'bbbb2222',
          git_hash: 'eeee5555',
          overwritten: false,
        },
      ]);
      assert.deepEqual([r3.reconciled.map((s) => s.step_anchor), r3.plans_completed], [['step-2'], ['plans/r.md']]);
      assert.equal((await store.showPlans('plans/r.md'))[0]?.status, 'done');
      assert.equal((await store.showStep('plans/r.md', 'step-1')).commit_hash, 'bbbb2222');
      const r4 = await store.reconcileTrailers(
        [{ commit_hash: 'eeee5555', plan_path: 'plans/r.md', step_anchor: 'step-1' }],
        MARGE,
        { force: true },
      );
      assert.deepEqual(
        r4.conflicts.map((x) => x.overwritten),
        [true],
      );
      assert.equal((await store.showStep('plans/r.md', 'step-1')).commit_hash, 'eeee5555');
    });

    test('prune removes plans whose file is in no worktree (dry run first), keeps their events, and leaves nothing dangling', async (t) => {
      const { store } = open(t);
      const root = mkdtempSync(join(tmpdir(), 'sf-prune-'));
      t.after(() => rmSync(root, { recursive: true, force: true }));
      mkdirSync(join(root, 'plans'));
      writeFileSync(join(root, 'plans', 'kept.md'), '# Plan: Kept\n');
      const kept = planSourceOf('plans/kept.md', parsePlan('# Plan: Kept\n## Step 1: A\n- [ ] a\n', 'plans/kept.md'));
      const gone = planSourceOf(
        'plans/gone.md',
        parsePlan(
          '# Plan: Gone\n## Step 1: A\n- [ ] a\n## Step 2: B\n**Depends on:** #step-1\n- [ ] b\n',
          'plans/gone.md',
        ),
      );
      await store.initPlan(kept, MARGE);
      await store.initPlan(gone, MARGE);
      const c = await store.claimNext(gone, RALPH);
      assert.ok(c.claimed);
      await store.complete(gone, 'step-1', { ...RALPH, token: c.claim_token }, { forceReason: 'contract' });
      const goneHash = (await store.showPlans('plans/gone.md'))[0]?.plan_hash;
      assert.deepEqual(
        await store.prunePlans([], MARGE, { dryRun: false }),
        { pruned: [], dry_run: false, dangling_rows: 0 },
        'no roots, nothing pruned',
      );
      assert.deepEqual(await store.prunePlans([root], MARGE, { dryRun: true }), {
        pruned: ['plans/gone.md'],
        dry_run: true,
        dangling_rows: 0,
      });
      assert.equal((await store.showPlans()).length, 2, 'a dry run changes nothing');
      assert.deepEqual(await store.prunePlans([root], MARGE, { dryRun: false }), {
        pruned: ['plans/gone.md'],
        dry_run: false,
        dangling_rows: 0,
      });
      assert.deepEqual(
        (await store.showPlans()).map((p) => p.plan_path),
        ['plans/kept.md'],
      );
      await assert.rejects(store.showStep('plans/gone.md', 'step-1'), { code: 'unknown_plan' });
      const history = await store.events({ planPath: 'plans/gone.md' });
      const prune = history.at(-1);
      assert.deepEqual(
        [prune?.action, prune?.reason, prune?.data],
        ['prune', 'plan file is in no worktree', { steps: 2, steps_completed: 1, plan_hash: goneHash }],
      );
      assert.ok(
        history.some((e) => e.action === 'complete'),
        'the pruned plan keeps its history',
      );
      const fresh = await store.initPlan(gone, MARGE);
      assert.equal(fresh.steps_created, 2, 'the path can be initialised again from scratch');
    });
  });
}
