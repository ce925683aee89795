import type { EpicVerification } from '../sqlite/schedulerSnapshot.ts';
import type { Tx } from './session.ts';

/** When the epic's last event matching `where` happened (its newest), if ever. */
async function lastEventAt(tx: Tx, epicId: string, where: string): Promise<string | undefined> {
  return (await tx.q<{ at: string }>(`SELECT at FROM events WHERE repo_id = $1 AND epic_id = $2 AND entity = 'epic' AND ${where} ORDER BY id DESC LIMIT 1`, [tx.repo, epicId]))[0]?.at;
}

/**
 * An epic's verification the way decide() and `epic finish` see it (docs/state-machine.md), as
 * SQLite's epicVerification reads it: verification passes since the plan's approval, grouped by run,
 * the latest since the epic last entered in_progress, and whether a build ended after it.
 */
export async function epicVerification(tx: Tx, epicId: string): Promise<EpicVerification> {
  const since = (await lastEventAt(tx, epicId, `to_status = 'in_progress'`)) ?? '';
  const approvedAt = await lastEventAt(tx, epicId, `action IN ('plan_approved', 'new_plan_approved')`);
  const rows = await tx.q<{ run_id: number | null; command: string; exit_code: number | null; verdict: string; created_at: string }>(`SELECT run_id, command, exit_code, verdict, created_at
    FROM verifications WHERE repo_id = $1 AND epic_id = $2 AND created_at >= coalesce($3::timestamptz, '-infinity') ORDER BY id DESC`, [tx.repo, epicId, approvedAt ?? null]);
  const batches: { key: string; verdict: string; created_at: string; failure: EpicVerification['lastFailure'] }[] = [];
  for (const r of rows) {
    const batch = batches.at(-1);
    const id = `${r.run_id ?? r.created_at}`;
    const failure = r.verdict === 'fail' ? { command: r.command, exitCode: r.exit_code } : null;
    if (batch && batch.key.startsWith(`${id}|`)) {
      if (failure) Object.assign(batch, { verdict: 'fail', key: `${id}|${r.command}|${r.exit_code}`, failure });
      continue;
    }
    batches.push({ key: `${id}|${failure ? `${r.command}|${r.exit_code}` : ''}`, verdict: r.verdict, created_at: r.created_at, failure });
  }
  const last = batches.find((b) => b.created_at >= since);
  const signature = (b: { key: string }) => b.key.slice(b.key.indexOf('|'));
  let streak = 0;
  for (const b of batches) {
    if (b.verdict !== 'fail' || signature(b) !== signature(batches[0] as { key: string })) break;
    streak++;
  }
  // A build to verify: a Ralph run that succeeded or moved the branch (a run that failed without a commit changed nothing).
  const lastRalphEnd = (await tx.q<{ at: string | null }>(`SELECT max(ended_at) AS at FROM runs WHERE repo_id = $1 AND epic_id = $2 AND role = 'ralph' AND ended_at IS NOT NULL
      AND (status = 'succeeded' OR (head_after IS NOT NULL AND head_after IS DISTINCT FROM head_before))`, [tx.repo, epicId]))[0]?.at ?? null;
  const unverifiedBuild = lastRalphEnd !== null && lastRalphEnd >= since && (!last || lastRalphEnd > last.created_at);
  return {
    lastVerdict: last ? (last.verdict === 'pass' ? 'pass' : 'fail') : null, sameFailureStreak: streak, unverifiedBuild,
    lastFailure: last?.failure ?? null, recorded: rows.length > 0,
  };
}
