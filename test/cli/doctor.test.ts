import assert from 'node:assert/strict';
import { existsSync, mkdirSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { assertFails, ensureCli, makeRepo, runCli, type Repo } from '../helpers/gitRepo.ts';

const PLAN = `# Plan: doctor demo

## Step 1: One {#step-1}
**Tasks:**
- [ ] one

## Step 2: Two {#step-2}
**Tasks:**
- [ ] two

## Step 3: Three {#step-3}
**Tasks:**
- [ ] three
`;

interface Finding {
  severity: 'error' | 'warning';
  code: string;
  message: string;
  fix: string;
}

interface Report {
  ok: boolean;
  errors: number;
  warnings: number;
  checks: { name: string; status: string; detail: string }[];
  findings: Finding[];
}

const dbPath = (repo: Repo) => join(repo.root, '.springfield', 'state.db');

function sql(repo: Repo, fn: (db: Database.Database) => void): void {
  const db = new Database(dbPath(repo));
  try {
    fn(db);
  } finally {
    db.close();
  }
}

function doctor(repo: Repo, expectExit: number): Report {
  const r = runCli(repo.root, ['doctor', '--json']);
  assert.equal(r.code, expectExit, r.stdout + r.stderr);
  return r.json<Report>();
}

function codes(report: Report): string[] {
  return report.findings.map((f) => f.code).sort();
}

describe('springfield doctor and prune', () => {
  before(() => ensureCli());
  const repos: Repo[] = [];
  const repo = (worktrees: string[] = []) => {
    const r = makeRepo({ files: { 'plans/p.md': PLAN }, worktrees });
    repos.push(r);
    return r;
  };
  after(() => repos.forEach((r) => r.cleanup()));

  test('a healthy store passes every check (text lists each check; exit 0)', () => {
    const r = repo(['a']);
    runCli(r.root, ['init', 'plans/p.md']);
    runCli(r.worktree('a'), ['claim', 'plans/p.md']);
    const report = doctor(r, 0);
    assert.equal(report.ok, true);
    assert.deepEqual(report.findings, []);
    assert.deepEqual(
      report.checks.map((c) => [c.name, c.status]),
      [
        ['database', 'ok'],
        ['integrity', 'ok'],
        ['schema', 'ok'],
        ['journal_mode', 'ok'],
        ['foreign_keys', 'ok'],
        ['orphaned_plans', 'ok'],
        ['expired_leases', 'ok'],
        ['missing_holders', 'ok'],
        ['plan_md', 'skipped'],
        ['tracked', 'ok'],
      ],
    );
    const text = runCli(r.root, ['doctor']);
    assert.equal(text.code, 0);
    assert.match(text.stdout, /^ok {4}database/m);
    assert.match(text.stdout, /^ok {4}journal_mode +wal$/m);
    assert.match(text.stdout, /^skip {2}plan_md/m);
  });

  test('no database yet is a warning, and doctor does not create one', () => {
    const r = repo();
    const report = doctor(r, 0);
    assert.deepEqual(codes(report), ['no_database']);
    assert.equal(existsSync(dbPath(r)), false);
  });

  test('warns about expired leases, claims of vanished worktrees, orphaned plans and PLAN.md ids, with fixes that work', () => {
    const r = repo(['a', 'b', 'c']);
    writeFileSync(join(r.root, 'plans', 'local.md'), PLAN);
    for (const plan of ['plans/p.md', 'plans/local.md']) runCli(r.root, ['init', plan]);
    for (const wt of ['a', 'b', 'c']) runCli(r.worktree(wt), ['claim', 'plans/p.md']);
    sql(r, (db) => {
      db.prepare(
        `UPDATE steps SET lease_expires_at = '2000-01-01T00:00:00.000Z' WHERE anchor = 'step-1' AND plan_path = 'plans/p.md'`,
      ).run();
      for (const id of ['sf-aaaa', 'sf-bbbb'])
        db.prepare(`INSERT INTO epics (id, title, created_at, updated_at) VALUES (?, 'e', 'now', 'now')`).run(id);
    });
    r.git(['worktree', 'remove', '--force', r.worktree('b')]);
    rmSync(r.worktree('c'), { recursive: true, force: true });
    unlinkSync(join(r.root, 'plans', 'local.md'));
    writeFileSync(
      join(r.root, 'PLAN.md'),
      '# Plan\n\n## Caching\n**springfield:** `sf-aaaa`\n\n## Gone\n**springfield:** `sf-dead`\n',
    );

    const report = doctor(r, 0);
    assert.equal(report.ok, true);
    assert.equal(report.errors, 0);
    assert.deepEqual(codes(report), [
      'epic_not_in_plan_md',
      'holder_worktree_missing',
      'holder_worktree_missing',
      'lease_expired',
      'orphaned_plan',
      'plan_md_unknown_epic',
    ]);
    const by = (code: string) => report.findings.filter((f) => f.code === code);
    assert.match(by('lease_expired')[0]?.fix ?? '', /^springfield reset plans\/p\.md step-1 /);
    assert.deepEqual(
      by('holder_worktree_missing').map((f) => f.fix),
      ['springfield reset plans/p.md step-2', 'springfield reset plans/p.md step-3 && git worktree prune'],
    );
    assert.deepEqual(
      by('orphaned_plan').map((f) => [f.message, f.fix]),
      [['plans/local.md: plan file is in no worktree', 'springfield prune']],
    );
    assert.match(by('plan_md_unknown_epic')[0]?.message ?? '', /^PLAN\.md:7: sf-dead names no epic/);
    assert.match(by('epic_not_in_plan_md')[0]?.message ?? '', /sf-bbbb/);
    const text = runCli(r.root, ['doctor']).stdout;
    assert.match(text, /^warn {2}expired_leases/m);
    assert.match(text, /^Fixes:\n(?: {2}.+\n)*? {2}springfield prune$/m);

    for (const step of ['step-1', 'step-2', 'step-3'])
      assert.equal(runCli(r.root, ['reset', 'plans/p.md', step]).code, 0);
    assert.equal(runCli(r.root, ['prune']).code, 0);
    r.git(['worktree', 'prune']);
    writeFileSync(join(r.root, 'PLAN.md'), '# Plan\n**springfield:** `sf-aaaa`\n**springfield:** `sf-bbbb`\n');
    assert.deepEqual(doctor(r, 0).findings, []);
  });

  test('errors (exit 1): journal mode not WAL, schema too new, foreign key violations, an unreadable file', () => {
    const r = repo();
    runCli(r.root, ['init', 'plans/p.md']);
    sql(r, (db) => db.pragma('journal_mode = DELETE'));
    const journal = doctor(r, 1);
    assert.deepEqual(codes(journal), ['journal_mode_not_wal']);
    assert.equal(journal.ok, false);
    assert.match(journal.findings[0]?.fix ?? '', /^springfield reconcile/);
    assert.equal(runCli(r.root, ['reconcile']).code, 0);
    doctor(r, 0);

    sql(r, (db) => {
      db.pragma('foreign_keys = OFF');
      db.prepare(
        `INSERT INTO checklist_items (plan_path, step_anchor, kind, ordinal, text) VALUES ('plans/p.md', 'step-404', 'task', 0, 'dangling')`,
      ).run();
    });
    const keys = doctor(r, 1);
    assert.deepEqual(
      keys.findings.map((f) => [f.code, f.fix]),
      [['foreign_key_violation', 'springfield prune']],
    );
    const pruned = runCli(r.root, ['prune', '--json']).json<{ pruned: string[]; dangling_rows: number }>();
    assert.deepEqual(pruned, { pruned: [], dry_run: false, dangling_rows: 1 });
    doctor(r, 0);

    sql(r, (db) => db.pragma('user_version = 99'));
    const schema = doctor(r, 1);
    assert.deepEqual(codes(schema), ['schema_too_new']);
    assert.equal(schema.checks.find((c) => c.name === 'orphaned_plans')?.status, 'skipped');
    assertFails(runCli(r.root, ['show', '--json']), 3, 'schema_too_new');

    const broken = makeRepo();
    repos.push(broken);
    mkdirSync(join(broken.root, '.springfield'));
    writeFileSync(dbPath(broken), 'this is not a database\n'.repeat(200));
    const unreadable = doctor(broken, 1);
    assert.deepEqual(codes(unreadable), ['not_a_database']);
    assert.match(runCli(broken.root, ['doctor']).stdout, /^error database/m);
  });

  test('prune removes plans whose file is in no worktree, keeps their events, and keeps plans a linked worktree still has', () => {
    const r = repo(['a']);
    const a = r.worktree('a');
    writeFileSync(join(r.root, 'plans', 'old.md'), PLAN);
    writeFileSync(join(a, 'plans', 'branch.md'), PLAN);
    runCli(r.root, ['init', 'plans/p.md']);
    runCli(r.root, ['init', 'plans/old.md']);
    runCli(a, ['init', 'plans/branch.md']);
    assert.equal(runCli(r.root, ['claim', 'plans/old.md']).code, 0);
    unlinkSync(join(r.root, 'plans', 'old.md'));

    const dry = runCli(r.root, ['prune', '--dry-run', '--json']).json<{ pruned: string[]; dry_run: boolean }>();
    assert.deepEqual(dry, { pruned: ['plans/old.md'], dry_run: true, dangling_rows: 0 });
    const plans = () =>
      runCli(r.root, ['show', '--json'])
        .json<{ plans: { plan_path: string }[] }>()
        .plans.map((p) => p.plan_path)
        .sort();
    assert.deepEqual(plans(), ['plans/branch.md', 'plans/old.md', 'plans/p.md']);
    const events = () =>
      runCli(r.root, ['events', '--json'])
        .json<{ events: { action: string; plan_path: string | null }[] }>()
        .events.filter((e) => e.plan_path === 'plans/old.md');
    const eventsBefore = events();
    assert.deepEqual(
      eventsBefore.map((e) => e.action),
      ['init', 'claim'],
    );

    const out = runCli(r.root, ['prune', '--json']).json<{ pruned: string[]; dry_run: boolean }>();
    assert.deepEqual(out, { pruned: ['plans/old.md'], dry_run: false, dangling_rows: 0 });
    assert.deepEqual(plans(), ['plans/branch.md', 'plans/p.md']);
    sql(r, (db) => {
      for (const table of ['steps', 'checklist_items', 'step_deps', 'artifacts']) {
        assert.equal(
          db.prepare(`SELECT COUNT(*) FROM ${table} WHERE plan_path = 'plans/old.md'`).pluck().get(),
          0,
          table,
        );
      }
    });
    const eventsAfter = events();
    assert.deepEqual(eventsAfter.slice(0, eventsBefore.length), eventsBefore);
    assert.deepEqual(
      eventsAfter.slice(eventsBefore.length).map((e) => e.action),
      ['prune'],
    );
    assert.deepEqual(runCli(r.root, ['prune', '--json']).json<{ pruned: string[] }>().pruned, []);
    assertFails(runCli(r.root, ['prune', 'extra', '--json']), 2, 'unexpected_argument');
  });
});
