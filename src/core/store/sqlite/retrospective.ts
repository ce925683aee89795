import { renderRetrospective, type Retrospective } from '../../epics/retrospective.ts';
import type { Actor } from '../types.ts';
import { getEpic } from './interim.ts';
import { writeEvent } from './rows.ts';
import type { Database } from './sqlite.ts';

/** The retrospective of an epic being merged at `now` (docs/lifecycle.md). */
export function retrospective(db: Database, now: Date, epicId: string): Retrospective {
  const epic = getEpic(db, epicId);
  const sessions: Record<string, number> = {};
  for (const r of db.prepare(`SELECT role, COUNT(*) AS n FROM runs WHERE epic_id = ? AND role IN ('lisa', 'ralph', 'bart', 'lovejoy') GROUP BY role ORDER BY role`).all(epicId) as { role: string; n: number }[]) sessions[r.role] = r.n;
  const failed = db.prepare(`SELECT id, role, step_anchor, status AS outcome, outcome_reason AS reason FROM runs WHERE epic_id = ? AND status NOT IN ('succeeded', 'running') ORDER BY id`)
    .all(epicId) as Retrospective['failed_runs'][number][];
  const failures = db.prepare(`SELECT command, exit_code, step_anchor, created_at AS at FROM verifications WHERE epic_id = ? AND verdict = 'fail' ORDER BY id`)
    .all(epicId) as Retrospective['verification_failures'][number][];
  const approved = db.prepare(`SELECT MIN(at) FROM events WHERE epic_id = ? AND entity = 'epic' AND action = 'plan_approved'`).pluck().get(epicId) as string | null;
  const versions = Number(db.prepare('SELECT COUNT(*) FROM plan_versions WHERE epic_id = ?').pluck().get(epicId));
  const minutes = approved ? Math.max(0, Math.round((now.getTime() - Date.parse(approved)) / 60_000)) : null;
  return {
    epic_id: epicId, sessions, failed_runs: failed, verification_failures: failures, plan_versions: versions, build_iterations: epic.iteration,
    approved_at: approved, merged_at: now.toISOString(), approval_to_merge_minutes: minutes,
  };
}

/** Records the retrospective in the event log (what `epic show` and the dashboard read back). */
export function recordRetrospective(db: Database, now: string, r: Retrospective, actor: Actor): void {
  writeEvent(db, now, actor, { entity: 'epic', action: 'retrospective', epicId: r.epic_id, reason: renderRetrospective(r).slice(2, -1).join('; '), data: { ...r } });
}
