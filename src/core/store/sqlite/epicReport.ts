import type { EpicReport } from '../epicTypes.ts';
import { getEpic } from './interim.ts';
import { showPlans } from './queries.ts';
import { listRuns, listVerifications, usageByEpic } from './runs.ts';
import { listSignals } from './signals.ts';
import type { Database } from './sqlite.ts';

/** What a finished epic's summary is made of: its plan's steps, verification, artifacts, signals and runs. */
export function epicReport(db: Database, now: Date, epicId: string): EpicReport {
  const epic = getEpic(db, epicId);
  const plan = showPlans(db, now).find((p) => p.epic_id === epicId) ?? null;
  const runs = listRuns(db, { epicId, limit: 10_000 });
  const verifications = listVerifications(db, { epicId, limit: 20 });
  const artifacts = plan ? db.prepare('SELECT step_anchor, kind, summary FROM artifacts WHERE plan_path = ? ORDER BY id').all(plan.plan_path) as EpicReport['artifacts'][number][] : [];
  return { read_at: now.toISOString(), epic, plan, runs, verifications, artifacts, signals: listSignals(db, epicId), usage: usageByEpic(db, epicId) };
}
