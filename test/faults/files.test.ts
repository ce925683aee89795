// Files-aware scheduling end to end (docs/files.md): real `springfield orchestrate`, real git, scripted
// builders that edit the files their steps name and stamp when they start and end. Builders of two
// epics whose steps share a file never run at once (and, with files-aware scheduling off, they do:
// the check can fail); a conflict between two epics is predicted before either merges, the epic that
// goes first merges first, and the other's conflict (both only added lines) resolves mechanically at its merge.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { CLI_PATH } from '../helpers/gitRepo.ts';
import { approve, faultRepo, violations, type FaultRepo } from './harness.ts';
import { ADMIT_ANY_MACHINE } from '../../src/shared/fleetSettings.ts';

/** Two steps: the first edits the shared file and one of its own, the second another of its own (after the first unless `independent`). */
function filesPlan(title: string, slug: string, independent = false): string {
  const files = (list: string) => [`**Files:** ${list}`];
  return [
    `# Plan: ${title}`,
    '',
    '## Approach',
    'Edit the files.',
    '',
    '## Step 1: Shared part {#step-1}',
    ...files(`src/shared.ts, src/${slug}-1.ts`),
    '**Tasks:**',
    '- [ ] Edit them',
    '',
    '## Step 2: Own part {#step-2}',
    ...(independent ? [] : ['**Depends on:** #step-1']),
    ...files(`src/${slug}-2.ts`),
    '**Tasks:**',
    '- [ ] Edit it',
    '',
  ].join('\n');
}

/**
 * A repository with src/shared.ts on main and two epics, alpha (created first, so it goes first) and
 * beta, whose approved plans are filesPlan's; the builders edit their steps' files and linger up to
 * 2 s unless another epic's builder is on one of their files.
 */
function setUp(
  t: Parameters<typeof faultRepo>[0],
  config: Record<string, unknown>,
  complexity: string,
  independent: readonly string[] = [],
): { f: FaultRepo; alpha: string; beta: string } {
  // Admission never holds the builders back on a busy machine: whether they overlap is the files rule's alone.
  const f = faultRepo(t, { maxParallelAgents: 2, admission: ADMIT_ANY_MACHINE, ...config });
  mkdirSync(join(f.repo, 'src'));
  writeFileSync(join(f.repo, 'src', 'shared.ts'), 'export const shared = [];\n');
  f.git('add', 'src/shared.ts');
  f.git('commit', '-qm', 'Shared file');
  const ids: string[] = [];
  for (const [title, slug] of [
    ['Alpha', 'alpha'],
    ['Beta', 'beta'],
  ] as const) {
    writeFileSync(join(f.repo, 'plans', `${slug}.md`), filesPlan(title, slug, independent.includes(slug)));
    f.git('add', `plans/${slug}.md`);
    f.git('commit', '-qm', `Plan ${title}`);
    const id = f.epic(title, { complexity });
    assert.equal(f.sf('plan', 'propose', id, `plans/${slug}.md`, '--agent', 'lisa').code, 0);
    approve(f, id);
    ids.push(id);
  }
  const [alpha = '', beta = ''] = ids;
  f.behave({ ralph: { do: 'edit', ms: 2000 } });
  return { f, alpha, beta };
}

interface Interval {
  readonly epic: string;
  readonly step: string;
  readonly files: readonly string[];
  readonly start: number;
  readonly end: number;
}

/** The builders' runs, from their own stamps. */
function intervals(f: FaultRepo): Interval[] {
  const records = f.records();
  return records
    .filter((r) => r.event === 'edit-start')
    .map((s) => {
      const end = records.find((r) => r.event === 'edit-end' && r.pid === s.pid);
      assert.ok(end, `the run of ${String(s.epic)} ${String(s.step)} ended`);
      return {
        epic: String(s.epic),
        step: String(s.step),
        files: s.files as string[],
        start: Number(s.at),
        end: Number(end.at),
      };
    });
}

/** Pairs of builders of different epics that shared a file and ran at the same time. */
function overlapping(runs: readonly Interval[]): string[] {
  const out: string[] = [];
  for (const [i, a] of runs.entries()) {
    for (const b of runs.slice(i + 1)) {
      const shared = a.files.filter((x) => b.files.includes(x));
      if (a.epic !== b.epic && shared.length > 0 && a.start < b.end && b.start < a.end)
        out.push(`${a.epic} ${a.step} and ${b.epic} ${b.step} both edited ${shared.join(', ')} at once`);
    }
  }
  return out;
}

function statusOf(
  f: FaultRepo,
  epic: string,
): { status: string; reason: string; conflicts: { with: string; files: string[] }[] } {
  const shown = f.sf('epic', 'show', epic).json as {
    status: string;
    status_reason: string | null;
    conflicts_ahead: { with: string; files: string[] }[];
  };
  return { status: shown.status, reason: shown.status_reason ?? '', conflicts: shown.conflicts_ahead };
}

test(
  'files-aware: builders of two epics whose steps share a file never run at once; the second builds on the first, merged, with no conflict',
  { timeout: 180_000 },
  (t) => {
    const { f, alpha, beta } = setUp(t, {}, 'trivial');
    const run = f.orchestrate();
    assert.equal(run.timedOut, false, run.stderr);
    assert.equal(run.code, 0, run.stderr);
    const runs = intervals(f);
    assert.equal(runs.length, 4, JSON.stringify(runs));
    assert.deepEqual(overlapping(runs), []);
    assert.match(
      run.stderr,
      new RegExp(`${beta}: waiting: shares src/shared\\.ts with ${alpha}( step-1|, which changed it and merges first)`),
    );
    assert.match(
      run.stderr,
      new RegExp(`${beta}: rebased onto main before step-1, which touches src/shared\\.ts that main changed`),
    );
    for (const epic of [alpha, beta]) assert.equal(statusOf(f, epic).status, 'done', run.stderr);
    assert.equal(f.git('show', 'main:src/shared.ts'), `export const shared = [];\n${alpha} step-1\n${beta} step-1`);
  },
);

test(
  "files-aware: the epic held by another's files starts its step as soon as that one is recorded merged, while its worktree is still being archived",
  { timeout: 180_000 },
  (t) => {
    const { f, alpha, beta } = setUp(t, {}, 'trivial');
    // Alpha's archive command runs once its merge is recorded, before its worktree is removed: it waits
    // until beta's held step-1 has started (60 s at most) and writes down which came first.
    const found = join(f.base, 'archive-found.txt');
    const archive = String.raw`
      const fs = require('node:fs');
      if (process.env.SPRINGFIELD_EPIC !== ${JSON.stringify(alpha)}) process.exit(0);
      const started = () => fs.readFileSync(process.env.SF_LOG, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l))
        .some((r) => r.event === 'edit-start' && r.epic === ${JSON.stringify(beta)} && r.step === 'step-1');
      const deadline = Date.now() + 60000;
      while (!started() && Date.now() < deadline) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
      fs.writeFileSync(${JSON.stringify(found)}, started() ? 'beta started' : 'beta had not started after 60 s');
    `;
    f.config({ archive: [[process.execPath, '-e', archive]] });
    // The loop wakes when something happens, not on a timer: a short interval would start beta's step anyway.
    const run = f.orchestrate({ intervalSeconds: 600 });
    assert.equal(readFileSync(found, 'utf8'), 'beta started', run.stderr);
    assert.equal(run.timedOut, false, run.stderr);
    assert.equal(run.code, 0, run.stderr);
    const at = (line: RegExp) => run.stderr.split('\n').findIndex((l) => line.test(l));
    const started = at(new RegExp(`start Ralph · ${beta} · step-1 `));
    const removed = at(new RegExp(`${alpha}: merged as [0-9a-f]+; worktree removed; done`));
    assert.ok(started >= 0 && removed > started, run.stderr);
    for (const epic of [alpha, beta]) assert.equal(statusOf(f, epic).status, 'done', run.stderr);
    assert.deepEqual(overlapping(intervals(f)), []);
  },
);

test(
  "files-aware: an epic held on a step whose file another epic's builder has builds its other ready step meanwhile",
  { timeout: 180_000 },
  (t) => {
    const { f, alpha, beta } = setUp(t, {}, 'trivial', ['beta']);
    // Alpha's builder of the shared step goes on only once beta's own step has started (bounded): with
    // beta idle until alpha merges, it would end first.
    f.behave({
      [`${alpha}:ralph`]: { do: 'edit', ms: 60_000, waitFor: { 'step-1': `${beta} step-2` } },
      ralph: { do: 'edit', ms: 2000 },
    });
    const run = f.orchestrate();
    assert.equal(run.timedOut, false, run.stderr);
    assert.equal(run.code, 0, run.stderr);
    const runs = intervals(f);
    assert.deepEqual(overlapping(runs), []);
    const find = (epic: string, step: string) => runs.find((r) => r.epic === epic && r.step === step);
    const [shared, own] = [find(alpha, 'step-1'), find(beta, 'step-2')];
    assert.ok(shared && own, JSON.stringify(runs));
    assert.ok(own.start < shared.end, `beta's step-2 started after alpha's step-1 ended:\n${run.stderr}`);
    assert.match(
      run.stderr,
      new RegExp(
        `start Ralph · ${beta} · step-2 \\(build step-2; step-1 is waiting: shares src/shared\\.ts with ${alpha} step-1(, which goes first)?\\)`,
      ),
    );
    for (const epic of [alpha, beta]) assert.equal(statusOf(f, epic).status, 'done', run.stderr);
    assert.equal(f.git('show', 'main:src/shared.ts'), `export const shared = [];\n${alpha} step-1\n${beta} step-1`);
  },
);

test(
  'files-aware off: the same builders run at once (the check can fail); the conflict is predicted before either merges, the one that goes first merges first, the other resolves mechanically',
  { timeout: 180_000 },
  (t) => {
    const { f, alpha, beta } = setUp(t, { filesAware: false }, 'critical');
    // Each builder of the shared step goes on only once the other's has started (bounded): the two then
    // overlap however far apart a busy machine starts them, if the scheduler runs them at once.
    f.behave({
      [`${alpha}:ralph`]: { do: 'edit', ms: 120_000, waitFor: { 'step-1': `${beta} step-1` } },
      [`${beta}:ralph`]: { do: 'edit', ms: 120_000, waitFor: { 'step-1': `${alpha} step-1` } },
    });
    const run = f.orchestrate();
    assert.equal(run.timedOut, false, run.stderr);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(overlapping(intervals(f)).length, 1, JSON.stringify(intervals(f)));

    // Both verified, waiting for a person's approval to merge: nothing merged yet, the conflict already seen.
    const [a, b] = [statusOf(f, alpha), statusOf(f, beta)];
    assert.deepEqual([a.status, b.status], ['verified', 'verified'], run.stderr);
    assert.deepEqual(a.conflicts, [{ with: beta, files: ['src/shared.ts'] }]);
    assert.deepEqual(b.conflicts, [{ with: alpha, files: ['src/shared.ts'] }]);
    assert.match(run.stderr, /: conflict ahead with sf-[0-9a-f]+ in src\/shared\.ts/);
    const shown = f.sf('epic', 'show', alpha);
    assert.match(shown.stdout, /"conflicts_ahead"/);
    const dry = f.sf('orchestrate', '--dry-run');
    assert.equal((dry.json.conflicts_ahead as unknown[]).length, 2, JSON.stringify(dry.json));

    // Files-aware on again: alpha, which goes first, merges first; beta waits for it, then its rebase meets the conflict.
    f.config({ filesAware: true });
    for (const epic of [alpha, beta]) assert.equal(f.sf('epic', 'approve-merge', epic, '--agent', 'marge').code, 0);
    const merge = f.orchestrate();
    assert.equal(merge.timedOut, false, merge.stderr);
    assert.match(
      merge.stderr,
      new RegExp(
        `${beta}: waiting: shares src/shared\\.ts with ${alpha}, which merges first \\(their branches conflict\\)`,
      ),
    );
    assert.equal(statusOf(f, alpha).status, 'done', merge.stderr);
    // Both only added a line at the end of the shared file: beta's rebase resolves it mechanically and it merges too.
    assert.equal(statusOf(f, beta).status, 'done', merge.stderr);
    assert.equal(f.git('show', 'main:src/shared.ts'), `export const shared = [];\n${alpha} step-1\n${beta} step-1`);
    assert.match(
      f.git('log', '-1', '--format=%B', 'main'),
      /Conflicts resolved mechanically:\n- src\/shared\.ts: both sides added lines: both kept/,
    );
    assert.match(merge.stderr, new RegExp(`${beta}: resolved mechanically — src/shared\\.ts`));
  },
);

test(
  "orchestrate --dry-run shows the waiting line: a step claimed in one epic holds the other epic's step that shares its file",
  { timeout: 90_000 },
  (t) => {
    const { f, alpha, beta } = setUp(t, {}, 'trivial');
    const places: Record<string, string> = {};
    for (const epic of [alpha, beta]) {
      const started = f.sf('epic', 'start', epic);
      assert.equal(started.code, 0, started.stderr);
      places[epic] = String(started.json.worktree_path);
    }
    // An agent claims alpha's first step by itself, in alpha's worktree: no run, only the claim.
    const claim = spawnSync(process.execPath, [CLI_PATH, 'claim', 'plans/alpha.md', '--json'], {
      cwd: places[alpha],
      env: f.env,
      encoding: 'utf8',
    });
    assert.equal(claim.status, 0, claim.stderr);
    const dry = spawnSync(process.execPath, [CLI_PATH, 'orchestrate', '--dry-run'], {
      cwd: f.repo,
      env: f.env,
      encoding: 'utf8',
    });
    assert.equal(dry.status, 0, dry.stderr);
    assert.match(dry.stdout, new RegExp(`^  ${beta}: waiting: shares src/shared\\.ts with ${alpha} step-1$`, 'm'));
    const json = f.sf('orchestrate', '--dry-run').json as {
      waiting: { epic_id: string; kind: string; message: string }[];
    };
    assert.deepEqual(json.waiting, [
      { epic_id: beta, kind: 'files', message: `waiting: shares src/shared.ts with ${alpha} step-1`, until: null },
    ]);
    // With files-aware scheduling off the same look would start beta's builder.
    f.config({ filesAware: false });
    const off = spawnSync(process.execPath, [CLI_PATH, 'orchestrate', '--dry-run'], {
      cwd: f.repo,
      env: f.env,
      encoding: 'utf8',
    });
    assert.match(off.stdout, new RegExp(`^  ${beta}: start Ralph on step-1 `, 'm'));
  },
);

test(
  'files-aware: in a chain (alpha meets beta on x.ts, beta meets gamma on y.ts) gamma does not wait behind beta waiting behind alpha: beta goes after both',
  { timeout: 180_000 },
  (t) => {
    const f = faultRepo(t, { maxParallelAgents: 3, admission: ADMIT_ANY_MACHINE });
    mkdirSync(join(f.repo, 'src'));
    for (const name of ['x', 'y']) writeFileSync(join(f.repo, 'src', `${name}.ts`), `// ${name}\n`);
    f.git('add', 'src');
    f.git('commit', '-qm', 'Shared files');
    const ids: string[] = [];
    for (const [title, files] of [
      ['Alpha', 'src/x.ts'],
      ['Beta', 'src/x.ts, src/y.ts'],
      ['Gamma', 'src/y.ts'],
    ] as const) {
      const plan = [`# Plan: ${title}`, '', '## Step 1: Edit {#step-1}', `**Files:** ${files}`, '- [ ] Edit', ''];
      writeFileSync(join(f.repo, 'plans', `${title}.md`), plan.join('\n'));
      f.git('add', `plans/${title}.md`);
      f.git('commit', '-qm', `Plan ${title}`);
      const id = f.epic(title, { complexity: 'trivial' });
      assert.equal(f.sf('plan', 'propose', id, `plans/${title}.md`, '--agent', 'lisa').code, 0);
      approve(f, id);
      ids.push(id);
    }
    const [alpha = '', beta = '', gamma = ''] = ids;
    f.behave({ ralph: { do: 'edit', ms: 1000 } });
    const run = f.orchestrate();
    assert.equal(run.timedOut, false, run.stderr);
    assert.equal(run.code, 0, run.stderr);
    const runs = intervals(f);
    assert.deepEqual(overlapping(runs), []);
    const of = (epic: string) => runs.find((r) => r.epic === epic) as Interval;
    // By age alone gamma would start only once beta, itself held by alpha, had merged.
    assert.ok(of(gamma).start < of(beta).start, `gamma built before beta: ${JSON.stringify(runs)}\n${run.stderr}`);
    assert.ok(of(beta).start > of(alpha).end && of(beta).start > of(gamma).end, JSON.stringify(runs));
    assert.doesNotMatch(run.stderr, new RegExp(`${gamma}: waiting: shares`));
    for (const epic of ids) assert.equal(statusOf(f, epic).status, 'done', run.stderr);
    assert.equal(f.git('show', 'main:src/x.ts'), `// x\n${alpha} step-1\n${beta} step-1`);
    assert.equal(f.git('show', 'main:src/y.ts'), `// y\n${gamma} step-1\n${beta} step-1`);
  },
);

test(
  'files-aware: the epic that goes first has a builder that fails (exit 1) or does nothing (exit 0): it is blocked after 3 sessions with the reason, and the one waiting for its files then builds and merges, nothing left claimed',
  { timeout: 300_000 },
  async (t) => {
    for (const [behaviour, reason] of [
      ['exit1', /^agent_failed: Ralph failed 3 times in a row \(last: run \d+ failed/],
      ['noop', /^agent_failed: Ralph failed 3 times in a row \(last: run \d+ no_progress/],
    ] as const) {
      const { f, alpha, beta } = setUp(t, {}, 'trivial');
      f.behave({ [`${alpha}:ralph`]: { do: behaviour }, ralph: { do: 'edit', ms: 200 } });
      const run = f.orchestrate();
      assert.deepEqual(
        violations(f, run, { epic: alpha, maxSessions: { ralph: 3 }, status: 'blocked', reason }),
        [],
        `${behaviour}: ${run.stderr}`,
      );
      assert.match(run.stderr, new RegExp(`${beta}: waiting: shares src/shared\\.ts with ${alpha}`), behaviour);
      assert.deepEqual(violations(f, run, { epic: beta, maxSessions: { ralph: 2 }, status: 'done' }), [], behaviour);
    }
  },
);
