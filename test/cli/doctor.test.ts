import assert from 'node:assert/strict';
import { existsSync, mkdirSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { assertFails, makeRepo, type Repo } from '../helpers/gitRepo.ts';
import { runCli } from '../helpers/cliInProcess.ts';

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

async function doctor(repo: Repo, expectExit: number): Promise<Report> {
  const r = await runCli(repo.root, ['doctor', '--json']);
  assert.equal(r.code, expectExit, r.stdout + r.stderr);
  return r.json<Report>();
}

function codes(report: Report): string[] {
  return report.findings.map((f) => f.code).sort();
}

describe('springfield doctor and prune', () => {
  const repos: Repo[] = [];
  const repo = (worktrees: string[] = []) => {
    const r = makeRepo({ files: { 'plans/p.md': PLAN }, worktrees });
    repos.push(r);
    return r;
  };
  after(() => repos.forEach((r) => r.cleanup()));

  test('a healthy store passes every check (text lists each check; exit 0)', async () => {
    const r = repo(['a']);
    await runCli(r.root, ['init', 'plans/p.md']);
    await runCli(r.worktree('a'), ['claim', 'plans/p.md']);
    const report = await doctor(r, 0);
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
    const text = await runCli(r.root, ['doctor']);
    assert.equal(text.code, 0);
    assert.match(text.stdout, /^ok {4}database/m);
    assert.match(text.stdout, /^ok {4}journal_mode +wal$/m);
    assert.match(text.stdout, /^skip {2}plan_md/m);
  });

  test('no database yet is a warning, and doctor does not create one', async () => {
    const r = repo();
    const report = await doctor(r, 0);
    assert.deepEqual(codes(report), ['no_database']);
    assert.equal(existsSync(dbPath(r)), false);
  });

  test('warns about expired leases, claims of vanished worktrees, orphaned plans and PLAN.md ids, with fixes that work', async () => {
    const r = repo(['a', 'b', 'c']);
    writeFileSync(join(r.root, 'plans', 'local.md'), PLAN);
    for (const plan of ['plans/p.md', 'plans/local.md']) await runCli(r.root, ['init', plan]);
    for (const wt of ['a', 'b', 'c']) await runCli(r.worktree(wt), ['claim', 'plans/p.md']);
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

    const report = await doctor(r, 0);
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
    const text = (await runCli(r.root, ['doctor'])).stdout;
    assert.match(text, /^warn {2}expired_leases/m);
    assert.match(text, /^Fixes:\n(?: {2}.+\n)*? {2}springfield prune$/m);

    for (const step of ['step-1', 'step-2', 'step-3'])
      assert.equal((await runCli(r.root, ['reset', 'plans/p.md', step])).code, 0);
    assert.equal((await runCli(r.root, ['prune'])).code, 0);
    r.git(['worktree', 'prune']);
    writeFileSync(join(r.root, 'PLAN.md'), '# Plan\n**springfield:** `sf-aaaa`\n**springfield:** `sf-bbbb`\n');
    assert.deepEqual((await doctor(r, 0)).findings, []);
  });

  test('errors (exit 1): journal mode not WAL, schema too new, foreign key violations, an unreadable file', async () => {
    const r = repo();
    await runCli(r.root, ['init', 'plans/p.md']);
    sql(r, (db) => db.pragma('journal_mode = DELETE'));
    const journal = await doctor(r, 1);
    assert.deepEqual(codes(journal), ['journal_mode_not_wal']);
    assert.equal(journal.ok, false);
    assert.match(journal.findings[0]?.fix ?? '', /^springfield reconcile/);
    assert.equal((await runCli(r.root, ['reconcile'])).code, 0);
    await doctor(r, 0);

    sql(r, (db) => {
      db.pragma('foreign_keys = OFF');
      db.prepare(
        `INSERT INTO checklist_items (plan_path, step_anchor, kind, ordinal, text) VALUES ('plans/p.md', 'step-404', 'task', 0, 'dangling')`,
      ).run();
    });
    const keys = await doctor(r, 1);
    assert.deepEqual(
      keys.findings.map((f) => [f.code, f.fix]),
      [['foreign_key_violation', 'springfield prune']],
    );
    const pruned = (await runCli(r.root, ['prune', '--json'])).json<{ pruned: string[]; dangling_rows: number }>();
    assert.deepEqual(pruned, { pruned: [], dry_run: false, dangling_rows: 1 });
    await doctor(r, 0);

    sql(r, (db) => db.pragma('user_version = 99'));
    const schema = await doctor(r, 1);
    assert.deepEqual(codes(schema), ['schema_too_new']);
    assert.equal(schema.checks.find((c) => c.name === 'orphaned_plans')?.status, 'skipped');
    assertFails(await runCli(r.root, ['show', '--json']), 3, 'schema_too_new');

    const broken = makeRepo();
    repos.push(broken);
    mkdirSync(join(broken.root, '.springfield'));
    writeFileSync(dbPath(broken), 'this is not a database\n'.repeat(200));
    const unreadable = await doctor(broken, 1);
    assert.deepEqual(codes(unreadable), ['not_a_database']);
    assert.match((await runCli(broken.root, ['doctor'])).stdout, /^error database/m);
  });

  test('prune removes plans whose file is in no worktree, keeps their events, and keeps plans a linked worktree still has', async () => {
    const r = repo(['a']);
    const a = r.worktree('a');
    writeFileSync(join(r.root, 'plans', 'old.md'), PLAN);
    writeFileSync(join(a, 'plans', 'branch.md'), PLAN);
    await runCli(r.root, ['init', 'plans/p.md']);
    await runCli(r.root, ['init', 'plans/old.md']);
    await runCli(a, ['init', 'plans/branch.md']);
    assert.equal((await runCli(r.root, ['claim', 'plans/old.md'])).code, 0);
    unlinkSync(join(r.root, 'plans', 'old.md'));

    const dry = (await runCli(r.root, ['prune', '--dry-run', '--json'])).json<{ pruned: string[]; dry_run: boolean }>();
    assert.deepEqual(dry, { pruned: ['plans/old.md'], dry_run: true, dangling_rows: 0 });
    const plans = async () =>
      (await runCli(r.root, ['show', '--json']))
        .json<{ plans: { plan_path: string }[] }>()
        .plans.map((p) => p.plan_path)
        .sort();
    assert.deepEqual(await plans(), ['plans/branch.md', 'plans/old.md', 'plans/p.md']);
    const events = async () =>
      (await runCli(r.root, ['events', '--json']))
        .json<{ events: { action: string; plan_path: string | null }[] }>()
        .events.filter((e) => e.plan_path === 'plans/old.md');
    const eventsBefore = await events();
    assert.deepEqual(
      eventsBefore.map((e) => e.action),
      ['init', 'claim'],
    );

    const out = (await runCli(r.root, ['prune', '--json'])).json<{ pruned: string[]; dry_run: boolean }>();
    assert.deepEqual(out, { pruned: ['plans/old.md'], dry_run: false, dangling_rows: 0 });
    assert.deepEqual(await plans(), ['plans/branch.md', 'plans/p.md']);
    sql(r, (db) => {
      for (const table of ['steps', 'checklist_items', 'step_deps', 'artifacts']) {
        assert.equal(
          db.prepare(`SELECT COUNT(*) FROM ${table} WHERE plan_path = 'plans/old.md'`).pluck().get(),
          0,
          table,
        );
      }
    });
    const eventsAfter = await events();
    assert.deepEqual(eventsAfter.slice(0, eventsBefore.length), eventsBefore);
    assert.deepEqual(
      eventsAfter.slice(eventsBefore.length).map((e) => e.action),
      ['prune'],
    );
    assert.deepEqual((await runCli(r.root, ['prune', '--json'])).json<{ pruned: string[] }>().pruned, []);
    assertFails(await runCli(r.root, ['prune', 'extra', '--json']), 2, 'unexpected_argument');
  });
});
