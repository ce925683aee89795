import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadSqlite } from '../../src/core/store/sqlite/sqlite.ts';
import type { ClaimResult, EventView } from '../../src/core/store/types.ts';
import { assertFails, assertOk, makeRepo, writeFiles, type CliResult, type Repo } from '../helpers/gitRepo.ts';
import { runCli } from '../helpers/cliInProcess.ts';
import type {
  EpicRow,
  TransitionOutcome,
  ApproveResult,
  PlanVersionRow,
  ProposeResult,
  SignalResult,
} from '../../src/core/store/epicTypes.ts';

type EpicJson = EpicRow & {
  build_budget: number;
  plan_budget: number;
  review: string;
  person_approval_before_merge: boolean;
};
type Row = Record<string, unknown>;

/** A plan with a title, Approach/Constraints prose and one task per named step (each depending on the previous). */
function planDoc(title: string, steps: readonly string[], extra = ''): string {
  const body = steps
    .map(
      (s, i) =>
        `## Step ${i + 1}: ${s} {#step-${i + 1}}\n**Depends on:** ${i === 0 ? 'none' : `#step-${i}`}\n**Tasks:**\n- [ ] Do ${s}\n`,
    )
    .join('\n');
  return `# Plan: ${title}\n\n## Approach\nApproach for ${title}.\n\n## Constraints\nNo new dependencies for ${title}.\n\n${body}${extra}`;
}

let repo: Repo;
let wt: string;
before(() => {
  repo = makeRepo({ files: { '.gitignore': '.springfield/\n' }, worktrees: ['a'] });
  wt = repo.worktree('a');
});
after(() => repo.cleanup());

async function sf(cwd: string, args: readonly string[], env: Record<string, string> = {}): Promise<CliResult> {
  return await runCli(cwd, [...args, '--json'], env);
}

function query(sql: string, ...params: (string | number)[]): Row[] {
  const Sqlite = loadSqlite();
  const db = new Sqlite(join(repo.root, '.springfield', 'state.db'), { readonly: true });
  try {
    return db.prepare(sql).all(...params) as Row[];
  } finally {
    db.close();
  }
}

/** Every row of every planning table, for "nothing changed" checks. */
function snapshot(): string {
  const tables = [
    'epics',
    'plans',
    'plan_versions',
    'steps',
    'checklist_items',
    'signals',
    'signal_locations',
    'events',
  ];
  return JSON.stringify(tables.map((t) => query(`SELECT * FROM ${t} ORDER BY rowid`)));
}

async function epic(id: string): Promise<EpicJson> {
  return assertOk<EpicJson>(await sf(repo.root, ['epic', 'show', id]));
}

/** Writes the plan into the main worktree and worktree a (the builder's copy). */
function writePlan(path: string, text: string): void {
  writeFiles(repo.root, { [path]: text });
  writeFiles(wt, { [path]: text });
}

/** The worktree an epic's plan is built in: the epic's own, made when it started (docs/lifecycle.md). */
function epicWorktreeOf(planPath: string): string {
  const row = query(
    'SELECT e.worktree_path AS path FROM plans p JOIN epics e ON e.id = p.epic_id WHERE p.plan_path = ?',
    planPath,
  )[0];
  assert.ok(row?.path, `${planPath}'s epic has a worktree`);
  return String(row.path);
}

/** Claims, finishes every ready step of the plan in its epic's worktree, until nothing is ready. */
async function buildAll(planPath: string): Promise<string[]> {
  const wt = epicWorktreeOf(planPath);
  const done: string[] = [];
  for (;;) {
    const c = assertOk<ClaimResult>(await sf(wt, ['claim', planPath]));
    if (!c.claimed) return done;
    assertOk(await sf(wt, ['start', planPath, c.step_anchor]));
    assertOk(await sf(wt, ['update', planPath, c.step_anchor, '--all', 'completed']));
    assertOk(await sf(wt, ['complete', planPath, c.step_anchor, '--token', String(c.claim_token)]));
    done.push(c.step_anchor);
  }
}

/** Creates an epic and takes it through propose, approve, start and build to `implemented`. */
async function implementedEpic(title: string, planPath: string, options: readonly string[] = []): Promise<string> {
  writePlan(planPath, planDoc(title, ['One']));
  const { id } = assertOk<EpicJson>(await sf(repo.root, ['epic', 'create', title, ...options]));
  assertOk(await sf(repo.root, ['plan', 'propose', id, planPath, '--agent', 'lisa']));
  assertOk(await sf(repo.root, ['plan', 'approve', id, '--agent', 'marge']));
  assertOk(await sf(repo.root, ['epic', 'start', id]));
  await buildAll(planPath);
  assert.equal(assertOk<TransitionOutcome>(await sf(repo.root, ['epic', 'finish', id])).to, 'implemented');
  return id;
}

describe('epic lifecycle through the CLI', () => {
  test('create → propose → request-changes → re-propose → approve → build → review → verified', async () => {
    const planPath = 'plans/cache.md';
    writeFiles(repo.root, { 'briefs/cache.md': 'Cache API responses.\n\nAccept: a hit costs under 1 ms.\n' });
    const created = assertOk<EpicJson & { plan_md: string }>(
      await sf(repo.root, [
        'epic',
        'create',
        'Add response cache',
        '--brief',
        'briefs/cache.md',
        '--priority',
        'p1',
        '--plan-md',
      ]),
    );
    const id = created.id;
    assert.match(id, /^sf-[0-9a-f]{4,6}$/);
    assert.equal(created.status, 'planned');
    assert.equal(created.priority, 'P1');
    assert.equal(created.brief, 'Cache API responses.\n\nAccept: a hit costs under 1 ms.');
    assert.match(readFileSync(join(repo.root, 'PLAN.md'), 'utf8'), new RegExp(`\\*\\*springfield:\\*\\* \`${id}\``));

    writePlan(planPath, planDoc('Cache', ['Client', 'Cache']));
    const v1 = assertOk<ProposeResult>(await sf(repo.root, ['plan', 'propose', id, planPath, '--agent', 'lisa']));
    assert.deepEqual([v1.version, v1.plan_iteration, v1.changes_since_previous], [1, 1, []]);
    const asked = assertOk<PlanVersionRow>(
      await sf(repo.root, ['plan', 'request-changes', id, '--feedback', 'Add a docs step', '--agent', 'marge']),
    );
    assert.deepEqual([asked.version, asked.status, asked.feedback], [1, 'changes_requested', 'Add a docs step']);

    const v2Text = planDoc('Cache', ['Client', 'Cache', 'Docs']);
    writePlan(planPath, v2Text);
    const v2 = assertOk<ProposeResult>(await sf(repo.root, ['plan', 'propose', id, planPath, '--agent', 'lisa']));
    assert.equal(v2.version, 2);
    assert.ok(v2.changes_since_previous.includes('step-3 added'), v2.changes_since_previous.join('; '));
    const shown = assertOk<{
      versions: PlanVersionRow[];
      version: { version: number; body: string; changes_since_previous: string[] };
    }>(await sf(repo.root, ['plan', 'show', id]));
    assert.deepEqual(
      shown.versions.map((v) => [v.version, v.status]),
      [
        [1, 'changes_requested'],
        [2, 'proposed'],
      ],
    );
    assert.equal(shown.version.body, v2Text);
    assert.ok(shown.version.changes_since_previous.includes('step-3 added'));

    assertFails(await sf(repo.root, ['plan', 'approve', id, '--agent', 'lisa']), 1, 'self_approval');
    assertFails(await sf(repo.root, ['plan', 'approve', id], { SPRINGFIELD_AGENT: 'lisa' }), 1, 'self_approval');
    const approved = assertOk<ApproveResult & { handoff_path: string }>(
      await sf(repo.root, ['plan', 'approve', id, '--agent', 'marge']),
    );
    assert.deepEqual(
      [approved.version, approved.init.steps_created, approved.transition.from, approved.transition.to],
      [2, 3, 'planned', 'ready'],
    );
    assert.equal(approved.plan_hash, v2.plan_hash);
    assert.equal(
      approved.handoff_path,
      join(repo.root, '.springfield', 'handoffs', `TODO-${id}.md`),
      'a copy beside the database: nothing is written into the worktree (docs/lifecycle.md)',
    );
    assert.equal(existsSync(join(repo.root, `TODO-${id}.md`)), false);
    const handoff = readFileSync(approved.handoff_path, 'utf8');
    assert.match(handoff, /## Intent[^\n]*\n\nCache API responses\.\n\nAccept: a hit costs under 1 ms\.\n/);
    assert.match(handoff, /## Approach[^\n]*\n\nApproach for Cache\.\n/);
    assert.match(handoff, /## Constraints[^\n]*\n\nNo new dependencies for Cache\.\n/);
    assert.ok(
      handoff.indexOf('## Intent') < handoff.indexOf('## Approach') &&
        handoff.indexOf('## Approach') < handoff.indexOf('## Constraints'),
    );

    const started = assertOk<TransitionOutcome & { worktree_path: string; branch: string }>(
      await sf(repo.root, ['epic', 'start', id]),
    );
    assert.deepEqual(
      [started.from, started.to, started.iteration, started.next_role, started.branch],
      ['ready', 'in_progress', 1, 'ralph', `springfield/${id}`],
    );
    // A person's start gives the epic its own worktree, as the scheduler's does; other checkouts are told where it is.
    const elsewhere = assertFails(await sf(wt, ['claim', planPath]), 1, 'epic_elsewhere');
    assert.equal(
      elsewhere.message,
      `${planPath} belongs to epic ${id}, built in its worktree ${started.worktree_path} on springfield/${id}: claim there (cd ${started.worktree_path}), or check out springfield/${id} in this worktree`,
    );
    assertFails(await sf(repo.root, ['claim', planPath]), 1, 'epic_elsewhere');
    assert.equal(
      repo.git(['log', '-1', '--format=%s'], started.worktree_path),
      `Handoff and approved plan v2 for ${id}`,
      'the handoff and the plan are committed on its branch',
    );
    const first = assertOk<ClaimResult>(await sf(started.worktree_path, ['claim', planPath]));
    assert.ok(first.claimed && first.step_anchor === 'step-1' && first.claimed_by === started.worktree_path);
    assertOk(await sf(repo.root, ['reset', planPath, 'step-1', '--reason', 'handed back']));
    assert.ok(assertOk<ClaimResult>(await sf(started.worktree_path, ['claim', planPath])).claimed);
    assertOk(await sf(started.worktree_path, ['update', planPath, 'step-1', '--all', 'completed']));
    assertOk(await sf(started.worktree_path, ['complete', planPath, 'step-1']));
    const stepOne = assertOk<{ events: EventView[] }>(await sf(repo.root, ['events', '--epic', id]))
      .events.filter((e) => e.step_anchor === 'step-1')
      .map((e) => e.action);
    assert.deepEqual(
      stepOne.filter((a) => ['claim', 'reset', 'complete'].includes(a)),
      ['claim', 'reset', 'claim', 'complete'],
      'events --epic shows the step events of its plan',
    );
    assertFails(await sf(repo.root, ['epic', 'finish', id]), 1, 'incomplete');
    assert.deepEqual(await buildAll(planPath), ['step-2', 'step-3']);
    const finished = assertOk<TransitionOutcome>(
      await sf(repo.root, ['epic', 'finish', id, '--reason', 'tests green']),
    );
    assert.deepEqual([finished.to, finished.next_role], ['implemented', 'bart']);

    const failed = assertOk<SignalResult>(
      await sf(repo.root, [
        'signal',
        id,
        '--type',
        'implementation_failure',
        '--summary',
        'cache never evicts',
        '--location',
        'plans/cache.md:3',
      ]),
    );
    assert.deepEqual(
      [failed.transition?.from, failed.transition?.to, failed.transition?.iteration, failed.transition?.next_role],
      ['implemented', 'in_progress', 2, 'ralph'],
    );
    assertOk(await sf(repo.root, ['epic', 'finish', id, '--reason', 'eviction fixed']));
    const passed = assertOk<SignalResult>(
      await sf(repo.root, ['signal', id, '--type', 'pass', '--summary', 'looks right']),
    );
    assert.deepEqual([passed.transition?.to, passed.transition?.next_role], ['verified', 'lovejoy']);
    assert.equal((await epic(id)).status, 'verified');

    const events = query(
      `SELECT action, from_status, to_status, reason FROM events WHERE entity = 'epic' AND epic_id = ? ORDER BY id`,
      id,
    );
    assert.deepEqual(
      events.map((e) => [e.action, e.from_status, e.to_status]),
      [
        ['create', null, 'planned'],
        ['plan_approved', 'planned', 'ready'],
        ['start', 'ready', 'in_progress'],
        ['steps_completed', 'in_progress', 'implemented'],
        ['signal_implementation_failure', 'implemented', 'in_progress'],
        ['steps_completed', 'in_progress', 'implemented'],
        ['signal_pass', 'implemented', 'verified'],
      ],
    );
    assert.deepEqual(
      events.filter((e) => e.action !== 'create' && e.action !== 'start').map((e) => e.reason),
      [
        'plan version 2 approved',
        'tests green',
        'implementation_failure: cache never evicts',
        'eviction fixed',
        'pass: looks right',
      ],
    );
    const listed = assertOk<{ epics: (EpicJson & { progress: { steps_completed: number } | null })[] }>(
      await sf(repo.root, ['epic', 'list']),
    ).epics.find((e) => e.id === id);
    assert.equal(listed?.status, 'verified');
    assert.equal(listed?.progress?.steps_completed, 3);
    const other = assertOk<EpicJson>(await sf(repo.root, ['epic', 'create', 'Another epic']));
    assertFails(await sf(repo.root, ['plan', 'propose', other.id, planPath]), 1, 'plan_owned');
  });

  test('option_viability_failure and adr_invalidated block the epic; a new approved plan makes it ready again', async () => {
    for (const type of ['option_viability_failure', 'adr_invalidated'] as const) {
      const planPath = `plans/${type}.md`;
      const id = await implementedEpic(`Blocked by ${type}`, planPath);
      const r = assertOk<SignalResult>(
        await sf(repo.root, ['signal', id, '--type', type, '--summary', 'approach cannot work']),
      );
      assert.deepEqual(
        [r.transition?.from, r.transition?.to, r.transition?.next_role],
        ['implemented', 'blocked', 'lisa'],
      );
      assert.equal((await epic(id)).status_reason, `${type}: approach cannot work`);
      const refused = assertFails(await sf(repo.root, ['epic', 'start', id]), 1, 'invalid_transition');
      assert.match(refused.message, /allowed: new_plan_approved, defer/);

      writePlan(planPath, planDoc(`Blocked by ${type}`, ['One', 'Two']));
      assertOk(await sf(repo.root, ['plan', 'propose', id, planPath, '--agent', 'lisa']));
      const approved = assertOk<ApproveResult>(await sf(repo.root, ['plan', 'approve', id, '--agent', 'marge']));
      assert.deepEqual(
        [approved.transition.event, approved.transition.from, approved.transition.to],
        ['new_plan_approved', 'blocked', 'ready'],
      );
      assert.equal(approved.init.steps_kept_completed, 1);
      assert.equal(
        assertOk<TransitionOutcome>(await sf(repo.root, ['epic', 'start', id])).iteration,
        1,
        'a new plan after a block counts its build iterations afresh',
      );
      assert.deepEqual(await buildAll(planPath), ['step-2'], 'the completed step is kept; only the new step is built');
    }
  });

  test('defer and resume; invalid events exit 1 naming the allowed events', async () => {
    const { id } = assertOk<EpicJson>(await sf(repo.root, ['epic', 'create', 'Park me']));
    const resumeRefused = assertFails(await sf(repo.root, ['epic', 'resume', id]), 1, 'invalid_transition');
    assert.match(
      resumeRefused.message,
      /planned; allowed: plan_approved, defer, agent_failed, agent_unavailable, plan_discarded, budget_exhausted$/,
    );
    const deferred = assertOk<TransitionOutcome>(
      await sf(repo.root, ['epic', 'defer', id, '--reason', 'not this quarter']),
    );
    assert.deepEqual([deferred.from, deferred.to, deferred.reason], ['planned', 'deferred', 'not this quarter']);
    assert.match(
      assertFails(await sf(repo.root, ['epic', 'defer', id]), 1, 'invalid_transition').message,
      /allowed: resume$/,
    );
    assert.equal(
      assertOk<TransitionOutcome>(await sf(repo.root, ['epic', 'resume', id, '--reason', 'back'])).to,
      'planned',
    );

    const building = await implementedEpic('Defer mid-flight', 'plans/defer.md');
    const before = snapshot();
    const finishRefused = assertFails(await sf(repo.root, ['epic', 'finish', building]), 1, 'invalid_transition');
    assert.match(
      finishRefused.message,
      /implemented; allowed: signal_pass, signal_implementation_failure, signal_option_viability_failure, signal_adr_invalidated, defer, iteration_budget_exhausted, agent_failed, agent_unavailable, budget_exhausted$/,
    );
    assert.equal(snapshot(), before, 'a refused event writes nothing');
    assert.equal(assertOk<TransitionOutcome>(await sf(repo.root, ['epic', 'defer', building])).from, 'implemented');
    assertOk(await sf(repo.root, ['epic', 'resume', building]));
    const notApproved = assertFails(await sf(repo.root, ['epic', 'start', building]), 1, 'invalid_transition');
    assert.match(
      notApproved.message,
      /allowed: plan_approved, defer, agent_failed, agent_unavailable, plan_discarded, budget_exhausted$/,
      'a resumed epic needs its plan approved again',
    );
  });

  test('approving a plan edited after it was proposed is plan_drift and changes nothing; an edit after approval never reaches the branch', async () => {
    const planPath = 'plans/drift.md';
    const text = planDoc('Drift', ['One', 'Two']);
    writePlan(planPath, text);
    const { id } = assertOk<EpicJson>(await sf(repo.root, ['epic', 'create', 'Drifting plan']));
    assertOk(await sf(repo.root, ['plan', 'propose', id, planPath, '--agent', 'lisa']));
    writeFiles(repo.root, { [planPath]: text.replace('- [ ] Do Two\n', '- [ ] Do Two\n- [ ] And three\n') });
    const before = snapshot();
    // A file named at approval must match the stored proposal (without one, the proposal itself is approved).
    const refused = assertFails(
      await sf(repo.root, ['plan', 'approve', id, planPath, '--agent', 'marge']),
      1,
      'plan_drift',
    );
    assert.match(refused.message, /And three/);
    assert.equal(snapshot(), before);
    assert.equal(existsSync(join(repo.root, `TODO-${id}.md`)), false);

    writeFiles(repo.root, {
      [planPath]: text
        .replace('- [ ] Do One', '- [x] Do One')
        .replace('Approach for Drift.', 'Approach for\nDrift, re-wrapped.'),
    });
    assert.equal(
      assertOk<ApproveResult>(await sf(repo.root, ['plan', 'approve', id, planPath, '--agent', 'marge'])).transition.to,
      'ready',
      'ticking a box or re-wrapping prose is not drift',
    );

    // Edited again after approval: the epic's branch gets the approved text from the store, and the person's copy is theirs.
    const edited = planDoc('Drift', ['One', 'Two', 'Three']);
    writeFiles(repo.root, { [planPath]: edited });
    const started = assertOk<{ to: string; worktree_path: string }>(await sf(repo.root, ['epic', 'start', id]));
    assert.equal(started.to, 'in_progress');
    assert.doesNotMatch(
      readFileSync(join(started.worktree_path, planPath), 'utf8'),
      /Step 3/,
      'the approved structure is what is built',
    );
    assert.equal(readFileSync(join(repo.root, planPath), 'utf8'), edited, "the person's edited copy is left as it is");
  });

  test('the iteration budget: past --max-iterations the epic is blocked with iteration_budget_exhausted', async () => {
    const id = await implementedEpic('Budgeted', 'plans/budget.md', ['--max-iterations', '2']);
    assert.equal((await epic(id)).build_budget, 2);
    const again = assertOk<SignalResult>(
      await sf(repo.root, ['signal', id, '--type', 'implementation_failure', '--summary', 'first miss']),
    );
    assert.deepEqual([again.transition?.to, again.transition?.iteration], ['in_progress', 2]);
    assertOk(await sf(repo.root, ['epic', 'finish', id]));
    const out = assertOk<SignalResult>(
      await sf(repo.root, ['signal', id, '--type', 'implementation_failure', '--summary', 'second miss']),
    );
    const reason =
      'iteration_budget_exhausted: 2 of 2 build iterations used; signal_implementation_failure would start build iteration 3';
    assert.deepEqual(
      [out.transition?.to, out.transition?.reason, out.transition?.next_role],
      ['blocked', reason, 'lisa'],
    );
    const shown = await epic(id);
    assert.deepEqual([shown.status, shown.status_reason, shown.iteration], ['blocked', reason, 2]);
    const last = query(
      `SELECT to_status, reason FROM events WHERE entity = 'epic' AND epic_id = ? ORDER BY id DESC LIMIT 1`,
      id,
    )[0];
    assert.deepEqual(last, { to_status: 'blocked', reason });
    assert.equal(query('SELECT id FROM signals WHERE epic_id = ?', id).length, 2, 'the review signal itself is kept');
  });

  test('epic finish with verification configured that has not run for the build: refused in one line, nothing written', async () => {
    const planPath = 'plans/unverified.md';
    writePlan(planPath, planDoc('Unverified', ['One']));
    const { id } = assertOk<EpicJson>(await sf(repo.root, ['epic', 'create', 'Unverified finish']));
    for (const args of [
      ['plan', 'propose', id, planPath, '--agent', 'lisa'],
      ['plan', 'approve', id, '--agent', 'marge'],
      ['epic', 'start', id],
    ])
      assertOk(await sf(repo.root, args));
    await buildAll(planPath);
    const config = join(repo.root, '.springfield', 'config.json');
    assert.equal(existsSync(config), false);
    writeFileSync(config, JSON.stringify({ verification: [['npm', 'test']] }));
    try {
      const before = snapshot();
      const r = await sf(repo.root, ['epic', 'finish', id]);
      const error = assertFails(r, 1, 'unverified');
      assert.equal(
        error.message,
        `cannot finish ${id}: verification is configured and has not passed since its latest build; let the scheduler verify it (springfield orchestrate)`,
      );
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.equal(snapshot(), before);
    } finally {
      rmSync(config);
    }
    assert.equal(
      assertOk<TransitionOutcome>(await sf(repo.root, ['epic', 'finish', id])).to,
      'implemented',
      'with no verification configured, the steps suffice',
    );
  });

  test('a refused signal stores no signal row and no event (atomic)', async () => {
    const planPath = 'plans/atomic.md';
    writePlan(planPath, planDoc('Atomic', ['One']));
    const { id } = assertOk<EpicJson>(await sf(repo.root, ['epic', 'create', 'Atomic signal']));
    assertOk(await sf(repo.root, ['plan', 'propose', id, planPath]));
    assertOk(await sf(repo.root, ['plan', 'approve', id]));
    assertOk(await sf(repo.root, ['epic', 'start', id]));
    const before = snapshot();
    const refused = assertFails(
      await sf(repo.root, [
        'signal',
        id,
        '--type',
        'pass',
        '--summary',
        'too early',
        '--location',
        'plans/atomic.md:1',
        '--note',
        'n',
      ]),
      1,
      'invalid_transition',
    );
    assert.match(
      refused.message,
      /in progress; allowed: steps_completed, defer, iteration_budget_exhausted, agent_failed, agent_unavailable, plan_drift, budget_exhausted$/,
    );
    assert.equal(snapshot(), before);
    assert.equal(query('SELECT id FROM signals WHERE epic_id = ?', id).length, 0);
  });

  test('complexity sets budgets and review policy, shown by epic show; PLAN.md entries from a linked worktree', async () => {
    const typo = assertOk<EpicJson>(await sf(wt, ['epic', 'create', 'fix typo', '--plan-md']));
    assert.deepEqual(
      [typo.complexity, typo.build_budget, typo.plan_budget, typo.review],
      ['trivial', 5, 2, 'skip_when_verified'],
    );
    const auth = assertOk<EpicJson>(
      await sf(wt, ['epic', 'create', 'add auth migration', '--plan-md', '--brief', 'Move sessions to the new table.']),
    );
    assert.deepEqual(
      [auth.complexity, auth.build_budget, auth.review, auth.person_approval_before_merge],
      ['critical', 40, 'required', true],
    );
    const forced = assertOk<EpicJson>(
      await sf(wt, ['epic', 'create', 'fix typo in auth docs', '--complexity', 'Simple']),
    );
    assert.deepEqual([forced.complexity, forced.complexity_source, forced.build_budget], ['simple', 'override', 10]);
    const text = await runCli(repo.root, ['epic', 'show', auth.id]);
    assert.equal(text.code, 0);
    assert.match(text.stdout, /critical/);
    assert.match(text.stdout, /review required/);
    assert.match(text.stdout, /0\/40/);
    // The config gives critical epics' review to the person: epic show says so.
    writeFileSync(join(repo.root, '.springfield', 'config.json'), JSON.stringify({ reviewedByPerson: ['critical'] }));
    const mine = await runCli(repo.root, ['epic', 'show', auth.id]);
    assert.match(mine.stdout, /critical \(\w+\) · priority P\d · reviewed by a person · person approves merge/);
    assert.equal(assertOk<{ reviewer: string }>(await sf(repo.root, ['epic', 'show', auth.id])).reviewer, 'person');
    assert.equal(assertOk<{ reviewer: string }>(await sf(repo.root, ['epic', 'show', typo.id])).reviewer, 'bart');
    rmSync(join(repo.root, '.springfield', 'config.json'));
    const planMd = readFileSync(join(repo.root, 'PLAN.md'), 'utf8');
    for (const id of [typo.id, auth.id]) assert.ok(planMd.includes(`**springfield:** \`${id}\``), planMd);
    assert.ok(planMd.includes('Move sessions to the new table.'));
    assert.equal(existsSync(join(wt, 'PLAN.md')), false, 'PLAN.md lives in the main worktree');
    assertFails(await sf(repo.root, ['epic', 'create', 'x', '--priority', 'P7']), 2, 'invalid_priority');
    assertFails(await sf(repo.root, ['epic', 'create', 'x', '--complexity', 'huge']), 2, 'invalid_complexity');
  });
});
