// The files of a step (docs/files.md, "Where a step's files come from") and the test merges of conflict
// ahead, read from a real git repository: declared globs, a step's own commits, the epic's changes;
// merge-tree's conflicts without a checkout touched.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { branchFiles, stepFiles } from '../../src/core/git/branchFiles.ts';
import { readStdinMerges, testMerge, testMerges } from '../../src/core/git/mergeTree.ts';
import { conflictsAhead } from '../../src/core/orchestrate/conflictsAhead.ts';
import { StepFiles } from '../../src/core/orchestrate/stepFiles.ts';
import type { EpicSnapshot, SchedulerSnapshot } from '../../src/core/scheduler/types.ts';
import type { Store } from '../../src/core/store/index.ts';
import { makeRepo, type Repo } from '../helpers/gitRepo.ts';

const PLAN = [
  '# Plan: Files',
  '',
  '## Step 1: Declared {#step-1}',
  '**Files:** src/a.ts',
  '- [ ] a',
  '',
  '## Step 2: Committed, not declared {#step-2}',
  '- [ ] b',
  '',
  '## Step 3: Declared by its substep {#step-3}',
  '- [ ] c',
  '',
  '### Step 3.1: Inner {#step-3-1}',
  '**Files:** `src/c/**`',
  '- [ ] c1',
  '',
  '## Step 4: Nothing known of its own {#step-4}',
  '- [ ] d',
  '',
  '## Step 5: Declared, with commits beyond it {#step-5}',
  '**Files:** src/e.ts',
  '- [ ] e',
  '',
].join('\n');

/** Commits `files` on the current branch of `cwd` with the given trailers. */
function commit(
  repo: Repo,
  cwd: string,
  files: Record<string, string>,
  message: string,
  trailers: string[] = [],
): void {
  for (const [path, text] of Object.entries(files)) writeFileSync(join(cwd, path), text);
  repo.git(['add', '-A'], cwd);
  repo.git(['commit', '-qm', message, ...trailers.flatMap((t) => ['--trailer', t])], cwd);
}

/** The store methods StepFiles reads, answering for one epic whose approved plan is PLAN with step-1 completed. */
function store(): Store {
  const fake = {
    epicPlans: () =>
      Promise.resolve({
        livePlanPath: 'plans/files.md',
        approved: { planPath: 'plans/files.md', body: PLAN, version: 1 },
      }),
    ready: () => Promise.resolve({ completed_steps: ['step-1'] }),
    getEpic: (id: string) => Promise.resolve({ id, created_at: '2025-01-01T00:00:00.000Z' }),
  };
  return fake as unknown as Store;
}

function snapshotOf(...epics: Pick<EpicSnapshot, 'id' | 'status'>[]): SchedulerSnapshot {
  return { epics: epics as EpicSnapshot[], runs: [] };
}

function repoWithEpic(t: { after: (fn: () => void) => void }): Repo {
  const repo = makeRepo({
    files: { 'src/a.ts': 'a\n', 'src/b.ts': 'b\n', 'src/e.ts': 'e\n', 'src/c/x.ts': 'x\n', 'README.md': 'r\n' },
  });
  t.after(() => repo.cleanup());
  repo.git(['checkout', '-qb', 'springfield/sf-1']);
  commit(repo, repo.root, { 'TODO-sf-1.md': 'handoff\n' }, 'Handoff', ['Springfield-Epic: sf-1']);
  commit(repo, repo.root, { 'src/a.ts': 'a1\n' }, 'Build step-1', [
    'Springfield-Step: step-1',
    'Springfield-Epic: sf-1',
  ]);
  commit(repo, repo.root, { 'src/b.ts': 'b1\n' }, 'Half of step-2', [
    'Springfield-Step: step-2',
    'Springfield-Epic: sf-1',
  ]);
  commit(repo, repo.root, { 'src/e.ts': 'e1\n', 'README.md': 'r1\n' }, 'Part of step-5', [
    'Springfield-Step: step-5',
    'Springfield-Epic: sf-1',
  ]);
  repo.git(['checkout', '-q', 'main']);
  return repo;
}

test("a step's files: declared (its substeps' too) with what its own commits touched; else its epic's changes; completed steps are left out", async (t) => {
  const repo = repoWithEpic(t);
  const annotated = await new StepFiles(store(), repo.root).annotate(snapshotOf({ id: 'sf-1', status: 'in_progress' }));
  const files = annotated.epics[0]?.files;
  assert.ok(files);
  assert.deepEqual(files.changed, ['README.md', 'TODO-sf-1.md', 'src/a.ts', 'src/b.ts', 'src/e.ts']);
  assert.deepEqual(files.openSteps, {
    'step-2': ['src/b.ts'],
    'step-3': ['src/c/**'],
    'step-4': ['README.md', 'TODO-sf-1.md', 'src/a.ts', 'src/b.ts', 'src/e.ts'],
    'step-5': ['src/e.ts', 'README.md'],
  });
  assert.equal(files.createdAt, '2025-01-01T00:00:00.000Z');
});

test('an epic with no branch yet: only declared files are known, and a step with none has no entry', async (t) => {
  const repo = makeRepo({ files: { 'README.md': 'r\n' } });
  t.after(() => repo.cleanup());
  const annotated = await new StepFiles(store(), repo.root).annotate(
    snapshotOf({ id: 'sf-1', status: 'in_progress' }, { id: 'sf-2', status: 'planned' }),
  );
  assert.deepEqual(annotated.epics[0]?.files?.openSteps, { 'step-3': ['src/c/**'], 'step-5': ['src/e.ts'] });
  assert.equal(annotated.epics[1]?.files, undefined, 'an epic not under way gets none');
});

test('branchFiles and stepFiles read names with spaces and several steps per commit', async (t) => {
  const repo = makeRepo({ files: { 'a b.txt': '1\n' } });
  t.after(() => repo.cleanup());
  repo.git(['checkout', '-qb', 'topic']);
  commit(repo, repo.root, { 'a b.txt': '2\n', 'new "q".txt': 'q\n' }, 'Two steps', [
    'Springfield-Step: step-1',
    'Springfield-Step: step-2',
  ]);
  const read = await branchFiles(repo.root, 'main', 'topic', process.env);
  assert.deepEqual(read?.changed, ['a b.txt', 'new "q".txt']);
  assert.deepEqual(Object.fromEntries(read?.bySteps ?? []), {
    'step-1': ['a b.txt', 'new "q".txt'],
    'step-2': ['a b.txt', 'new "q".txt'],
  });
  assert.equal(await branchFiles(repo.root, 'main', 'no-such-branch', process.env), null);
  assert.deepEqual(stepFiles(''), new Map());
});

test('testMerge: a clean merge, a conflict naming its files, and a name git cannot merge; nothing checked out changes', async (t) => {
  const repo = makeRepo({ files: { 'src/shared.ts': 'base\n', 'src/other.ts': 'o\n' } });
  t.after(() => repo.cleanup());
  for (const [branch, line] of [
    ['springfield/sf-a', 'from a'],
    ['springfield/sf-b', 'from b'],
  ] as const) {
    repo.git(['checkout', '-qb', branch, 'main']);
    commit(repo, repo.root, { 'src/shared.ts': `base\n${line}\n` }, line);
  }
  repo.git(['checkout', '-qb', 'springfield/sf-c', 'main']);
  commit(repo, repo.root, { 'src/other.ts': 'o\nc\n' }, 'c');
  repo.git(['checkout', '-q', 'main']);
  const status = repo.git(['status', '--porcelain']);
  assert.deepEqual(await testMerge(repo.root, 'springfield/sf-a', 'springfield/sf-b', process.env), {
    ok: true,
    conflicts: ['src/shared.ts'],
  });
  assert.deepEqual(await testMerge(repo.root, 'springfield/sf-a', 'springfield/sf-c', process.env), {
    ok: true,
    conflicts: [],
  });
  const bad = await testMerge(repo.root, 'main', 'nothing-here', process.env);
  assert.equal(bad.ok, false);
  assert.equal(repo.git(['status', '--porcelain']), status);
  assert.equal(repo.git(['rev-parse', '--abbrev-ref', 'HEAD']), 'main');

  assert.deepEqual(await conflictsAhead(repo.root, 'sf-a', ['sf-a', 'sf-b', 'sf-c', 'sf-gone']), [
    { with: 'sf-b', files: ['src/shared.ts'] },
  ]);
  commit(repo, repo.root, { 'src/shared.ts': 'base\non main\n' }, 'main moves');
  assert.deepEqual(await conflictsAhead(repo.root, 'sf-a', ['sf-b']), [
    { with: 'main', files: ['src/shared.ts'] },
    { with: 'sf-b', files: ['src/shared.ts'] },
  ]);
  assert.deepEqual(await conflictsAhead(repo.root, 'sf-gone', ['sf-a']), [], 'an epic without a branch has none');

  // Several at once in one git process, each answered as on its own; a pair git cannot merge is
  // answered alone (the one process gives up on it) and the others still are.
  const a = 'springfield/sf-a';
  const pairs = [
    { ours: a, theirs: 'springfield/sf-b' },
    { ours: a, theirs: 'springfield/sf-c' },
    { ours: 'main', theirs: a },
  ];
  const alone = await Promise.all(pairs.map((p) => testMerge(repo.root, p.ours, p.theirs, process.env)));
  assert.deepEqual(await testMerges(repo.root, pairs, process.env), alone);
  assert.deepEqual(
    alone.map((r) => r.ok && r.conflicts),
    [['src/shared.ts'], [], ['src/shared.ts']],
  );
  const withBad = await testMerges(repo.root, [...pairs, { ours: 'main', theirs: 'nothing-here' }], process.env);
  assert.deepEqual(withBad.slice(0, 3), alone);
  assert.equal(withBad[3]?.ok, false);
  assert.equal(repo.git(['status', '--porcelain']), status);
});

test('readStdinMerges reads merge-tree --stdin output, and refuses what is not its shape', () => {
  const tree = 'a'.repeat(40);
  assert.deepEqual(readStdinMerges(`0\0${tree}\0f\0g\0f\0\0` + `1\0${tree}\0\0`), [
    { ok: true, conflicts: ['f', 'g'] },
    { ok: true, conflicts: [] },
  ]);
  assert.deepEqual(readStdinMerges(''), []);
  for (const bad of [`2\0${tree}\0\0`, `1\0nottree\0\0`, `0\0${tree}\0f`, `1\0${tree}\0\0x`])
    assert.equal(readStdinMerges(bad), null, JSON.stringify(bad));
});
