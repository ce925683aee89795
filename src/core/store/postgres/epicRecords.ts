import { renderRetrospective, type Retrospective } from '../../epics/retrospective.ts';
import type { EpicReport, TransitionOutcome } from '../epicTypes.ts';
import type { Actor } from '../types.ts';
import { applyEpicEvent, getEpic } from './interim.ts';
import { showPlans } from './queries.ts';
import { writeEvent } from './rows.ts';
import { listRuns, usageByEpic } from './runs.ts';
import type { Tx } from './session.ts';
import { listSignals } from './signals.ts';
import { listVerifications } from './verifications.ts';

/** The retrospective of an epic being merged now (docs/lifecycle.md), as on SQLite. */
export async function retrospective(tx: Tx, epicId: string): Promise<Retrospective> {
  const epic = await getEpic(tx, epicId);
  const sessions: Record<string, number> = {};
  const counted = await tx.q<{ role: string; n: number }>(`SELECT role, count(*)::int AS n FROM runs WHERE repo_id = $1 AND epic_id = $2 AND role IN ('lisa', 'ralph', 'bart', 'lovejoy')
    GROUP BY role ORDER BY role COLLATE "C"`, [tx.repo, epicId]);
  for (const r of counted) sessions[r.role] = r.n;
  const failed = await tx.q<Retrospective['failed_runs'][number]>(`SELECT id, role, step_anchor, status AS outcome, outcome_reason AS reason FROM runs
    WHERE repo_id = $1 AND epic_id = $2 AND status NOT IN ('succeeded', 'running') ORDER BY id`, [tx.repo, epicId]);
  const failures = await tx.q<Retrospective['verification_failures'][number]>(`SELECT command, exit_code, step_anchor, created_at AS at FROM verifications
    WHERE repo_id = $1 AND epic_id = $2 AND verdict = 'fail' ORDER BY id`, [tx.repo, epicId]);
  const head = (await tx.q<{ approved: string | null; versions: number }>(`SELECT
      (SELECT min(at) FROM events WHERE repo_id = $1 AND epic_id = $2 AND entity = 'epic' AND action = 'plan_approved') AS approved,
      (SELECT count(*) FROM plan_versions WHERE repo_id = $1 AND epic_id = $2)::int AS versions`, [tx.repo, epicId]))[0];
  const approved = head?.approved ?? null;
  const minutes = approved ? Math.max(0, Math.round((Date.parse(tx.now) - Date.parse(approved)) / 60_000)) : null;
  return {
    epic_id: epicId, sessions, failed_runs: failed, verification_failures: failures, plan_versions: head?.versions ?? 0, build_iterations: epic.iteration,
    approved_at: approved, merged_at: tx.now, approval_to_merge_minutes: minutes,
  };
}

/** The epic merged, with its retrospective (the given one, else one read now) in the event log: one transaction. */
export async function markMerged(tx: Tx, epicId: string, actor: Actor, reason: string, given?: Retrospective): Promise<TransitionOutcome> {
  const t = await applyEpicEvent(tx, epicId, 'merged', actor, reason);
  const r = given ?? await retrospective(tx, epicId);
  await writeEvent(tx, actor, { entity: 'epic', action: 'retrospective', epicId: r.epic_id, reason: renderRetrospective(r).slice(2, -1).join('; '), data: { ...r } });
  return t;
}

/** What a finished epic's summary is made of: its plan's steps, verification, artifacts, signals and runs. */
export async function epicReport(tx: Tx, epicId: string): Promise<EpicReport> {
  const epic = await getEpic(tx, epicId);
  const path = (await tx.q<{ plan_path: string }>('SELECT plan_path FROM plans WHERE repo_id = $1 AND epic_id = $2 ORDER BY created_at, plan_path LIMIT 1', [tx.repo, epicId]))[0]?.plan_path;
  const plan = path ? (await showPlans(tx, path))[0] ?? null : null;
  const artifacts = plan ? await tx.q<EpicReport['artifacts'][number]>('SELECT step_anchor, kind, summary FROM artifacts WHERE repo_id = $1 AND plan_path = $2 ORDER BY id', [tx.repo, plan.plan_path]) : [];
  return {
    read_at: tx.now, epic, plan, runs: await listRuns(tx, { epicId, limit: 10_000 }), verifications: await listVerifications(tx, { epicId, limit: 20 }),
    artifacts, signals: await listSignals(tx, epicId), usage: await usageByEpic(tx, epicId),
  };
}
