// What the PostgreSQL race and crash tests share: the rows the stress checker reads, read from the
// server (holders named `host:worktree`, plus the stored readiness counts checked against the graph),
// and a plan initialised there with a copy per clone.
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { openStore } from '../../src/core/store/index.ts';
import { stepEventRow, type RunRows, type Violation } from '../stress/checker.ts';
import type { PreparedRun } from '../stress/planGen.ts';

export const REPO = 'race-repo';

/** The run's rows as the checker reads them, holders named `host:worktree`; plus the stored readiness counts checked against the graph. */
export async function postgresRows(url: string, repo: string): Promise<RunRows> {
  const client = new pg.Client({ connectionString: url, options: '-c search_path=springfield' });
  await client.connect();
  try {
    const steps = (
      await client.query(
        `SELECT anchor, status, claim_token::int AS claim_token, completed_host || ':' || completed_by AS completed_by,
        completed_token::int AS completed_token FROM steps WHERE repo_id = $1`,
        [repo],
      )
    ).rows;
    const events = (
      await client.query(
        `SELECT id::int AS id, action, step_anchor, host || ':' || worktree AS worktree, data FROM events
        WHERE repo_id = $1 AND entity = 'step' AND action IN ('claim', 'reclaim', 'complete') ORDER BY id`,
        [repo],
      )
    ).rows.map(stepEventRow);
    const deps = (
      await client.query('SELECT plan_path, step_anchor, depends_on FROM step_deps WHERE repo_id = $1', [repo])
    ).rows;
    // Each top-level step's stored blockers against the graph: its family's dependencies on steps
    // outside the family that are not completed. Counted here: as one SQL join, PostgreSQL's plan
    // for it took a minute over 1,200 steps.
    const all = (
      await client.query('SELECT plan_path, anchor, parent_anchor, status, blockers FROM steps WHERE repo_id = $1', [
        repo,
      ])
    ).rows as { plan_path: string; anchor: string; parent_anchor: string | null; status: string; blockers: number }[];
    const byKey = new Map(all.map((r) => [`${r.plan_path}\0${r.anchor}`, r]));
    const top = (r: (typeof all)[number]) => r.parent_anchor ?? r.anchor;
    const derived = new Map<string, number>();
    for (const d of deps as { plan_path: string; step_anchor: string; depends_on: string }[]) {
      const c = byKey.get(`${d.plan_path}\0${d.step_anchor}`);
      const dep = byKey.get(`${d.plan_path}\0${d.depends_on}`);
      if (!c || !dep || dep.status === 'completed' || top(dep) === top(c)) continue;
      const key = `${d.plan_path}\0${top(c)}`;
      derived.set(key, (derived.get(key) ?? 0) + 1);
    }
    const wrongCounts = all
      .filter((r) => r.parent_anchor === null)
      .map((r) => ({
        anchor: r.anchor,
        blockers: r.blockers,
        derived: derived.get(`${r.plan_path}\0${r.anchor}`) ?? 0,
      }))
      .filter((w) => w.blockers !== w.derived);
    const open = (
      await client.query(
        `SELECT p.plan_path,
        (SELECT coalesce(sum(n), 0)::int FROM plan_open o WHERE o.repo_id = p.repo_id AND o.plan_path = p.plan_path) AS open_steps,
        (SELECT count(*)::int FROM steps s WHERE s.repo_id = p.repo_id AND s.plan_path = p.plan_path
        AND s.parent_anchor IS NULL AND s.status <> 'completed') AS counted FROM plans p WHERE p.repo_id = $1`,
        [repo],
      )
    ).rows as { plan_path: string; open_steps: number; counted: number }[];
    const integrity: Violation[] = [
      ...wrongCounts.map((w) => ({
        kind: 'integrity' as const,
        step: w.anchor,
        detail: `blockers ${w.blockers}, the graph says ${w.derived}`,
      })),
      ...open
        .filter((o) => o.open_steps !== o.counted)
        .map((o) => ({
          kind: 'integrity' as const,
          step: null,
          detail: `${o.plan_path}: open_steps ${o.open_steps}, counted ${o.counted}`,
        })),
    ];
    return { steps, events, deps, integrity };
  } finally {
    await client.end();
  }
}

/** The holders (`host:worktree`) of a claim on a top-level step now. */
export async function claimHolders(url: string, repo: string): Promise<Set<string>> {
  const client = new pg.Client({ connectionString: url, options: '-c search_path=springfield' });
  await client.connect();
  try {
    const rows = (
      await client.query(
        `SELECT claimed_host || ':' || claimed_by AS holder FROM steps
        WHERE repo_id = $1 AND status IN ('claimed', 'in_progress') AND parent_anchor IS NULL`,
        [repo],
      )
    ).rows as { holder: string }[];
    return new Set(rows.map((r) => r.holder));
  } finally {
    await client.end();
  }
}

/** Two clones of the prepared plan (the same file in two places) and the plan initialised on the server. */
export async function prepareShared(url: string, run: PreparedRun): Promise<{ a: string; b: string }> {
  const files = {
    a: join(run.dir, 'clone-a', 'plans', 'stress.md'),
    b: join(run.dir, 'clone-b', 'plans', 'stress.md'),
  };
  for (const f of Object.values(files)) {
    mkdirSync(join(f, '..'), { recursive: true });
    copyFileSync(run.planFile, f);
  }
  const store = openStore({ location: url, repository: { id: REPO, source: 'configured' }, host: 'setup' });
  try {
    await store.initPlan(run.source, { worktree: '/wt/setup', agent: null });
  } finally {
    await store.close();
  }
  return files;
}
