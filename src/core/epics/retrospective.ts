/**
 * Lovejoy's retrospective, mechanically (docs/lifecycle.md): what an epic cost and where it stumbled,
 * read from the store when it is merged — no agent session. It goes into the epic's summary, into
 * PLAN.md beside the epic's id, and into the event log.
 */
import { writeEvent } from '../store/sqlite/rows.ts';
import type { Database } from '../store/sqlite/sqlite.ts';
import type { Actor } from '../store/types.ts';
import { getEpic } from './epicStore.ts';

export interface Retrospective {
  readonly epic_id: string;
  readonly sessions: Readonly<Record<string, number>>;
  readonly failed_runs: readonly { id: number; role: string; step_anchor: string | null; outcome: string; reason: string | null }[];
  readonly verification_failures: readonly { command: string; exit_code: number | null; step_anchor: string | null; at: string }[];
  readonly plan_versions: number;
  readonly build_iterations: number;
  readonly approved_at: string | null;
  readonly merged_at: string;
  /** From the first plan approval to the merge, in whole minutes (null without an approval). */
  readonly approval_to_merge_minutes: number | null;
}

/** The retrospective of an epic being merged at `now`. */
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

function duration(minutes: number | null): string {
  if (minutes === null) return 'no approval recorded';
  return minutes < 60 ? `${minutes} min` : `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** The retrospective as markdown lines (a `## Retrospective` section). */
export function renderRetrospective(r: Retrospective): string[] {
  const total = Object.values(r.sessions).reduce((a, b) => a + b, 0);
  return [
    '## Retrospective', '',
    `- Sessions by role: ${Object.entries(r.sessions).map(([role, n]) => `${role} ${n}`).join(', ') || 'none'} (total ${total})`,
    `- Plan versions: ${r.plan_versions} · build iterations: ${r.build_iterations}`,
    `- Failed runs: ${r.failed_runs.length === 0 ? 'none' : r.failed_runs.length}`,
    ...r.failed_runs.map((f) => `  - run #${f.id} ${f.role}${f.step_anchor ? ` on ${f.step_anchor}` : ''}: ${f.outcome}${f.reason ? ` — ${f.reason}` : ''}`),
    `- Verification failures: ${r.verification_failures.length === 0 ? 'none' : r.verification_failures.length}`,
    ...r.verification_failures.map((v) => `  - \`${v.command}\` exited ${v.exit_code ?? '?'}${v.step_anchor ? ` after ${v.step_anchor}` : ''} at ${v.at}`),
    `- Approval to merge: ${duration(r.approval_to_merge_minutes)}${r.approved_at ? ` (approved ${r.approved_at}, merged ${r.merged_at})` : ''}`,
    '',
  ];
}

/**
 * PLAN.md with the retrospective under the epic's id line (`**springfield:** \`sf-…\``), replacing an
 * earlier one for the same epic; null when PLAN.md does not name the epic.
 */
export function planMdWithRetrospective(text: string, epicId: string, r: Retrospective): string | null {
  const lines = text.split('\n');
  const at = lines.findIndex((l) => l.includes(`**springfield:** \`${epicId}\``));
  if (at < 0) return null;
  const marker = `**Retrospective (${epicId}):**`;
  let end = at + 1;
  if (lines[end]?.startsWith(marker)) end += 1;
  const total = Object.values(r.sessions).reduce((a, b) => a + b, 0);
  const line = `${marker} merged ${r.merged_at.slice(0, 10)}; sessions ${Object.entries(r.sessions).map(([role, n]) => `${role} ${n}`).join(', ')} (total ${total}); failed runs ${r.failed_runs.length}; verification failures ${r.verification_failures.length}; approval to merge ${duration(r.approval_to_merge_minutes)}.`;
  return [...lines.slice(0, at + 1), line, ...lines.slice(end)].join('\n');
}
