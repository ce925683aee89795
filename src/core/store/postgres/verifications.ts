import type { VerificationEntry, VerificationView } from '../runTypes.ts';
import type { Tx } from './session.ts';

const COLUMNS = 'id, run_id, epic_id, plan_path, step_anchor, command, exit_code, verdict, duration_ms, output_tail, created_at';

/** Verification results, newest first. */
export function listVerifications(tx: Tx, options: { epicId?: string; limit?: number } = {}): Promise<VerificationView[]> {
  return options.epicId
    ? tx.q<VerificationView>(`SELECT ${COLUMNS} FROM verifications WHERE repo_id = $1 AND epic_id = $2 ORDER BY id DESC LIMIT $3`, [tx.repo, options.epicId, options.limit ?? 50])
    : tx.q<VerificationView>(`SELECT ${COLUMNS} FROM verifications WHERE repo_id = $1 ORDER BY id DESC LIMIT $2`, [tx.repo, options.limit ?? 50]);
}

/** Stores the results of one verification pass (rows of a pass share run_id), in order, in one statement. */
export async function recordVerifications(tx: Tx, entries: readonly VerificationEntry[]): Promise<void> {
  if (entries.length === 0) return;
  const col = <T>(f: (v: VerificationEntry) => T) => entries.map(f);
  await tx.q(`INSERT INTO verifications (repo_id, run_id, epic_id, plan_path, step_anchor, command, exit_code, verdict, duration_ms, output_tail, created_at)
    SELECT $1, v.run_id, v.epic_id, v.plan_path, v.step_anchor, v.command, v.exit_code, v.verdict, v.duration_ms, v.output_tail, $2
    FROM unnest($3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[], $8::int[], $9::text[], $10::int[], $11::text[])
      WITH ORDINALITY AS v(run_id, epic_id, plan_path, step_anchor, command, exit_code, verdict, duration_ms, output_tail, n)
    ORDER BY v.n`,
  [tx.repo, tx.now, col((v) => v.runId), col((v) => v.epicId), col((v) => v.planPath), col((v) => v.stepAnchor), col((v) => v.command),
    col((v) => v.exitCode), col((v) => v.verdict), col((v) => v.durationMs), col((v) => v.outputTail)]);
}

/** The verdict of the epic's newest verification result, or null. */
export async function lastVerdict(tx: Tx, epicId: string): Promise<'pass' | 'fail' | null> {
  return (await tx.q<{ verdict: 'pass' | 'fail' }>('SELECT verdict FROM verifications WHERE repo_id = $1 AND epic_id = $2 ORDER BY id DESC LIMIT 1', [tx.repo, epicId]))[0]?.verdict ?? null;
}
