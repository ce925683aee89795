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
    const deps = (await client.query('SELECT step_anchor, depends_on FROM step_deps WHERE repo_id = $1', [repo])).rows;
    const wrongCounts = (
      await client.query(
        `SELECT s.plan_path, s.anchor, s.blockers, coalesce(d.n, 0)::int AS derived FROM steps s
        LEFT JOIN (SELECT c.plan_path, coalesce(c.parent_anchor, c.anchor) AS top, count(*) AS n FROM step_deps sd
          JOIN steps c ON c.repo_id = sd.repo_id AND c.plan_path = sd.plan_path AND c.anchor = sd.step_anchor
          JOIN steps dep ON dep.repo_id = sd.repo_id AND dep.plan_path = sd.plan_path AND dep.anchor = sd.depends_on
          WHERE sd.repo_id = $1 AND dep.status <> 'completed' AND coalesce(dep.parent_anchor, dep.anchor) <> coalesce(c.parent_anchor, c.anchor) GROUP BY 1, 2) d
        ON d.plan_path = s.plan_path AND d.top = s.anchor
      WHERE s.repo_id = $1 AND s.parent_anchor IS NULL AND s.blockers <> coalesce(d.n, 0)`,
        [repo],
      )
    ).rows as { anchor: string; blockers: number; derived: number }[];
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
