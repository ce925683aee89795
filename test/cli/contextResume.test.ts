import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ContextView } from '../../src/core/store/epicTypes.ts';
import { loadSqlite } from '../../src/core/store/sqlite/sqlite.ts';
import type { ClaimResult } from '../../src/core/store/types.ts';
import {
  assertOk,
  cleanEnv,
  CLI_PATH,
  ensureCli,
  makeRepo,
  writeFiles,
  type CliResult,
  type Repo,
} from '../helpers/gitRepo.ts';
import { runCli } from '../helpers/cliInProcess.ts';

const RESUME_PLAN = `# Plan: Resume demo

## Approach
Wrap the HTTP client in a small cache module.

## Constraints
No new runtime dependencies.

## Step 1: Cache module {#step-1}
**Tasks:**
- [ ] Create the module
- [ ] Wire it in
**Tests:**
- [ ] Unit test the cache
**Checkpoints:**
- [ ] Build passes

## Step 2: Docs {#step-2}
**Depends on:** #step-1
**Tasks:**
- [ ] Document the cache
`;

/**
 * A fresh agent session: it knows only its working directory and that `springfield` is on PATH.
 * It reads `springfield context --json`, does the work each next command implies and runs the
 * commands as given (only "<…>" placeholders filled in), re-reading the context after each update.
 */
const SESSION = String.raw`
import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync } from 'node:fs';
const sh = (cmd, env = {}) => spawnSync('sh', ['-c', cmd], { encoding: 'utf8', env: { ...process.env, ...env } });
const transcript = [];
const die = (error) => { process.stdout.write(JSON.stringify({ ok: false, error, transcript })); process.exit(0); };
const hasCommit = sh('springfield commit --help').status === 0;
const fallback = (cmd, ctx) => {
  const message = /-m "([^"]*)"/.exec(cmd)?.[1] ?? 'work';
  const anchor = /--step (\S+)/.exec(cmd)?.[1] ?? ctx.step.anchor;
  return ['git add -A', 'git commit -q -m "' + message + '"', 'springfield complete ' + ctx.plan.plan_path + ' ' + anchor + ' --commit "$(git rev-parse HEAD)"'];
};
let first = null;
let committed = false;
for (let round = 0; round < 10 && !committed; round++) {
  const r = sh('springfield context --json');
  if (r.status !== 0) die('context failed: ' + r.stderr);
  const ctx = JSON.parse(r.stdout);
  first ??= ctx;
  if (!ctx.step || !ctx.step.held_by_you) die('the context names no step held by this worktree');
  for (const doc of ctx.must_read) if (!existsSync(doc.path)) die('must_read path not found: ' + doc.path);
  const env = { SPRINGFIELD_CLAIM_TOKEN: String(ctx.step.claim_token) };
  for (const given of ctx.next_commands) {
    const cmd = given.replace(/"<[^"<>]+>"/g, '"session work on ' + ctx.step.anchor + '"');
    if (/<[^>]*>/.test(cmd)) die('a placeholder the session cannot fill: ' + given);
    const isUpdate = cmd.startsWith('springfield update ');
    const isCommit = cmd.startsWith('springfield commit ');
    if (isUpdate) appendFileSync('work.txt', cmd + '\n');
    for (const c of isCommit && !hasCommit ? fallback(cmd, ctx) : [cmd]) {
      const out = sh(c, env);
      transcript.push(c);
      if (out.status !== 0) die('command failed (exit ' + out.status + '): ' + c + '\n' + out.stderr + out.stdout);
    }
    if (isUpdate) break;
    if (isCommit) committed = true;
  }
}
if (!committed) die('never reached the commit');
const last = JSON.parse(sh('springfield context --json').stdout);
process.stdout.write(JSON.stringify({ ok: true, hasCommit, first, last, transcript }));
`;

interface SessionReport {
  readonly ok: boolean;
  readonly error?: string;
  readonly hasCommit: boolean;
  readonly first: ContextView;
  readonly last: ContextView;
  readonly transcript: string[];
}

let repo: Repo;
before(() => {
  ensureCli();
  repo = makeRepo({
    files: {
      '.gitignore': '.springfield/\n',
      'plans/resume.md': RESUME_PLAN,
      'docs/adr/0001-use-sqlite.md': '# ADR 1: SQLite\n',
      'docs/adr/0002-wal.md': '# ADR 2: WAL\n',
      'src/a.ts': 'export const a = 1;\nexport const b = 2;\nexport const c = 3;\n',
    },
  });
});
after(() => repo.cleanup());

async function sf(cwd: string, args: readonly string[], env: Record<string, string> = {}): Promise<CliResult> {
  return await runCli(cwd, [...args, '--json'], env);
}

function dbRows(sql: string, ...params: (string | number)[]): Record<string, unknown>[] {
  const db = new (loadSqlite())(join(repo.root, '.springfield', 'state.db'), { readonly: true });
  try {
    return db.prepare(sql).all(...params) as Record<string, unknown>[];
  } finally {
    db.close();
  }
}

/** Creates an epic, has Lisa propose `planPath` and Marge approve it, and commits the narrative files on main. */
async function approvedEpic(title: string, brief: string, planPath: string): Promise<string> {
  const { id } = assertOk<{ id: string }>(
    await sf(repo.root, ['epic', 'create', title, '--brief', brief, '--plan-md']),
  );
  assertOk(await sf(repo.root, ['plan', 'propose', id, planPath, '--agent', 'lisa']));
  assertOk(await sf(repo.root, ['plan', 'approve', id, '--agent', 'marge']));
  repo.git(['add', '-A']);
  repo.git(['commit', '-q', '-m', `approve ${id}`]);
  return id;
}

describe('context', () => {
  test('a fresh session in the worktree resumes from `context --json` alone and completes the step', async (t) => {
    const id = await approvedEpic('Resume demo', 'Responses are cached; a hit costs under 1 ms.', 'plans/resume.md');
    // The session works where the epic's work lives: its own worktree (docs/lifecycle.md).
    const wtA = assertOk<{ worktree_path: string }>(await sf(repo.root, ['epic', 'start', id])).worktree_path;
    const claim = assertOk<ClaimResult>(await sf(wtA, ['claim', 'plans/resume.md']));
    assert.ok(claim.claimed && claim.step_anchor === 'step-1');
    assertOk(await sf(wtA, ['start', 'plans/resume.md', 'step-1']));
    assertOk(await sf(wtA, ['update', 'plans/resume.md', 'step-1', '--task', '0', 'completed']));

    const bin = join(repo.tmp, 'bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'springfield'), `#!/bin/sh\nexec "${process.execPath}" "${CLI_PATH}" "$@"\n`);
    chmodSync(join(bin, 'springfield'), 0o755);
    writeFileSync(join(repo.tmp, 'session.mjs'), SESSION);
    const run = spawnSync(process.execPath, [join(repo.tmp, 'session.mjs')], {
      cwd: wtA,
      encoding: 'utf8',
      timeout: 120_000,
      env: cleanEnv({ PATH: `${bin}:${process.env.PATH ?? ''}` }),
    });
    assert.equal(run.status, 0, run.stderr);
    const report = JSON.parse(run.stdout) as SessionReport;
    assert.ok(report.ok, `${report.error}\ntranscript:\n${report.transcript.join('\n')}`);

    t.diagnostic(`session ran: ${report.transcript.join(' ; ')}`);
    const finalCommand = report.transcript.at(-1) ?? '';
    if (report.hasCommit) assert.match(finalCommand, /^springfield commit -m "session work on step-1" --step step-1$/);
    else
      assert.match(
        finalCommand,
        /^springfield complete plans\/resume\.md step-1 --commit /,
        'without `springfield commit`: git commit, then complete',
      );
    const first = report.first;
    assert.equal(first.epic?.id, id);
    assert.equal(first.intent, 'Responses are cached; a hit costs under 1 ms.');
    assert.equal(first.approach, 'Wrap the HTTP client in a small cache module.');
    assert.equal(first.constraints, 'No new runtime dependencies.');
    assert.deepEqual(
      [first.step?.anchor, first.step?.held_by_you, first.step?.claim_token],
      ['step-1', true, claim.claim_token],
    );
    assert.ok(first.step?.lease_expires_at);
    assert.deepEqual(
      first.step?.items.map((i) => [i.kind, i.ordinal, i.status]),
      [
        ['task', 0, 'completed'],
        ['task', 1, 'open'],
        ['test', 0, 'open'],
        ['checkpoint', 0, 'open'],
      ],
    );
    const updates = report.transcript.filter((c) => c.startsWith('springfield update '));
    assert.deepEqual(
      updates.map((c) => c.replace(/^springfield update plans\/resume\.md step-1 /, '')),
      ['--task 1 completed', '--test 0 completed', '--checkpoint 0 completed'],
    );

    const step = dbRows(
      `SELECT status, completed_by, completed_token, commit_hash FROM steps WHERE plan_path = 'plans/resume.md' AND anchor = 'step-1'`,
    )[0];
    const head = repo.git(['rev-parse', 'HEAD'], wtA);
    assert.deepEqual(step, {
      status: 'completed',
      completed_by: wtA,
      completed_token: claim.claim_token,
      commit_hash: head,
    });
    assert.deepEqual(
      dbRows(
        `SELECT DISTINCT status FROM checklist_items WHERE plan_path = 'plans/resume.md' AND step_anchor = 'step-1'`,
      ),
      [{ status: 'completed' }],
    );
    assert.match(repo.git(['log', '-1', '--format=%B'], wtA), /session work on step-1/);
    assert.match(repo.git(['show', '--stat', '--format=', 'HEAD'], wtA), /work\.txt/);
    if (report.hasCommit) assert.match(repo.git(['log', '-1', '--format=%B'], wtA), /Springfield-Step: step-1/);
    assert.equal(report.last.step, null, 'nothing held any more');
    const after = assertOk<ContextView>(await sf(wtA, ['context', '--epic', id]));
    assert.deepEqual(
      [after.plan?.steps_completed, after.step, after.next_commands[0]],
      [1, null, 'springfield claim plans/resume.md'],
    );
  });

  test('a planner sent back with request-changes sees the feedback in her context', async () => {
    writeFiles(repo.root, { 'plans/planner.md': RESUME_PLAN.replace('Resume demo', 'Planner') });
    const { id } = assertOk<{ id: string }>(
      await sf(repo.root, ['epic', 'create', 'Planner feedback', '--brief', 'Make retries configurable.']),
    );
    assertOk(await sf(repo.root, ['plan', 'propose', id, 'plans/planner.md', '--agent', 'lisa']));
    assertOk(
      await sf(repo.root, [
        'plan',
        'request-changes',
        id,
        '--feedback',
        'Split step 1 into client and retry policy',
        '--agent',
        'marge',
      ]),
    );
    for (const view of [
      assertOk<ContextView>(await sf(repo.root, ['context', '--epic', id], { SPRINGFIELD_AGENT: 'lisa' })),
      assertOk<ContextView>(await sf(repo.root, ['context'], { SPRINGFIELD_EPIC: id, SPRINGFIELD_AGENT: 'lisa' })),
    ]) {
      assert.deepEqual(
        [view.epic?.status, view.epic?.next_role, view.intent],
        ['planned', 'lisa', 'Make retries configurable.'],
      );
      assert.deepEqual(
        view.feedback.map((f) => [f.version, f.feedback]),
        [[1, 'Split step 1 into client and retry policy']],
      );
      assert.ok(view.next_commands[0]?.startsWith(`springfield plan propose ${id} `), view.next_commands.join('\n'));
    }
    const text = await runCli(repo.root, ['context', '--epic', id]);
    assert.equal(text.code, 0);
    assert.match(text.stdout, /Split step 1 into client and retry policy/);
  });

  test('the JSON carries intent, approach, constraints, items, blockers, token, lease, signals, verification failures and what to read', async () => {
    const planV1 = RESUME_PLAN.replace('Resume demo', 'Everything')
      .replace('**Checkpoints:**\n- [ ] Build passes\n', '')
      .replace(/\n## Step 2[\s\S]*$/, '\n');
    writeFiles(repo.root, { 'plans/full.md': planV1 });
    const id = await approvedEpic('Context everything', 'Everything a session needs.', 'plans/full.md');
    const wt = assertOk<{ worktree_path: string }>(await sf(repo.root, ['epic', 'start', id])).worktree_path;
    assertOk(await sf(wt, ['claim', 'plans/full.md']));
    assertOk(await sf(wt, ['update', 'plans/full.md', 'step-1', '--all', 'completed']));
    assertOk(await sf(wt, ['complete', 'plans/full.md', 'step-1']));
    assertOk(await sf(repo.root, ['epic', 'finish', id]));
    assertOk(
      await sf(repo.root, [
        'signal',
        id,
        '--type',
        'adr_invalidated',
        '--summary',
        'ADR 1 no longer holds',
        '--location',
        'src/a.ts:2:3',
        '--note',
        'uses the old API',
        '--location',
        'docs/adr/0001-use-sqlite.md:1',
      ]),
    );
    const planV2 = `${planV1}\n## Step 2: Retry policy {#step-2}\n**Depends on:** #step-1\n**Tasks:**\n- [ ] Backoff\n- [ ] Jitter\n**Tests:**\n- [ ] Retry test\n\n## Step 3: Docs {#step-3}\n**Depends on:** #step-2\n**Tasks:**\n- [ ] Write docs\n`;
    writeFiles(repo.root, { 'plans/full.md': planV2 });
    assertOk(await sf(repo.root, ['plan', 'propose', id, 'plans/full.md', '--agent', 'lisa']));
    assertOk(await sf(repo.root, ['plan', 'approve', id, '--agent', 'marge']));
    repo.git(['add', '-A']);
    repo.git(['commit', '-q', '-m', 'plan v2']);
    const wtB = assertOk<{ worktree_path: string }>(await sf(repo.root, ['epic', 'start', id])).worktree_path;
    const claim = assertOk<ClaimResult>(await sf(wtB, ['claim', 'plans/full.md']));
    assert.ok(claim.claimed && claim.step_anchor === 'step-2', JSON.stringify(claim));
    assertOk(await sf(wtB, ['update', 'plans/full.md', 'step-2', '--task', '0', 'completed']));
    const db = new (loadSqlite())(join(repo.root, '.springfield', 'state.db'));
    const insert = db.prepare(
      `INSERT INTO verifications (epic_id, plan_path, step_anchor, command, exit_code, verdict, duration_ms, output_tail, created_at) VALUES (?, 'plans/full.md', 'step-2', ?, ?, ?, 10, ?, ?)`,
    );
    insert.run(
      id,
      'npm test',
      1,
      'fail',
      'FAIL retry.test.ts\n  expected 3 retries, got 1',
      '2026-01-01T00:00:00.000Z',
    );
    insert.run(id, 'npm run lint', 0, 'pass', 'ok', '2026-01-01T00:00:01.000Z');
    db.close();

    const view = assertOk<ContextView>(await sf(wtB, ['context']));
    assert.deepEqual(
      [view.epic?.id, view.epic?.status, view.intent],
      [id, 'in_progress', 'Everything a session needs.'],
    );
    assert.deepEqual(
      [view.approach, view.constraints],
      ['Wrap the HTTP client in a small cache module.', 'No new runtime dependencies.'],
    );
    assert.deepEqual(
      [view.step?.anchor, view.step?.held_by_you, view.step?.claim_token, view.step?.lease_expires_at],
      ['step-2', true, claim.claim_token, claim.lease_expires_at],
    );
    assert.deepEqual(
      view.step?.items.map((i) => [i.kind, i.text, i.status]),
      [
        ['task', 'Backoff', 'completed'],
        ['task', 'Jitter', 'open'],
        ['test', 'Retry test', 'open'],
      ],
    );
    assert.deepEqual(
      view.signals.map((s) => [s.type, s.summary, s.locations]),
      [
        [
          'adr_invalidated',
          'ADR 1 no longer holds',
          [
            { file: 'src/a.ts', line: 2, end_line: 3, note: 'uses the old API' },
            { file: 'docs/adr/0001-use-sqlite.md', line: 1, end_line: null, note: null },
          ],
        ],
      ],
    );
    assert.deepEqual(
      view.verification_failures.map((v) => [v.command, v.exit_code, v.output_tail, v.step_anchor]),
      [['npm test', 1, 'FAIL retry.test.ts\n  expected 3 retries, got 1', 'step-2']],
    );
    assert.ok(
      view.decisions.some((d) => d.kind === 'signal_adr_invalidated' && d.summary.includes('ADR 1 no longer holds')),
      JSON.stringify(view.decisions),
    );
    const paths = view.must_read.map((m) => m.path);
    // Started by hand, in its own worktree like any epic: the handoff is on its branch (docs/lifecycle.md).
    for (const p of [
      `TODO-${id}.md`,
      'PLAN.md',
      'plans/full.md',
      'docs/adr/0001-use-sqlite.md',
      'docs/adr/0002-wal.md',
    ])
      assert.ok(paths.includes(p), `${p} missing from ${paths.join(', ')}`);

    const later = assertOk<ContextView>(await sf(wtB, ['context', '--step', 'step-3']));
    assert.deepEqual(
      [later.step?.anchor, later.step?.depends_on, later.step?.blocked_by, later.step?.held_by_you],
      ['step-3', ['step-2'], ['step-2'], false],
    );
    const text = await runCli(wtB, ['context']);
    assert.equal(text.code, 0);
    for (const s of ['Backoff', 'uses the old API', 'expected 3 retries, got 1', 'docs/adr/0002-wal.md'])
      assert.ok(text.stdout.includes(s), `text context lacks ${s}`);
  });
});
