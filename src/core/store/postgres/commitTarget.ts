import { UsageError } from '../../errors.ts';
import type { CommitTarget, TargetQuery } from '../types.ts';
import { requireStep } from './rows.ts';
import type { Tx } from './session.ts';

/**
 * Finds the step to commit: the named one (in the named plan, or the one plan that has it), else the
 * single top-level step this worktree on this host holds. None or several is a usage error.
 */
export async function resolveTarget(tx: Tx, q: TargetQuery): Promise<CommitTarget> {
  if (q.step !== undefined) {
    if (q.planPath !== undefined) return { planPath: (await requireStep(tx, q.planPath, q.step)).plan_path, anchor: q.step };
    const plans = (await tx.q<{ plan_path: string }>('SELECT plan_path FROM steps WHERE repo_id = $1 AND anchor = $2 ORDER BY plan_path', [tx.repo, q.step])).map((r) => r.plan_path);
    if (plans.length === 0) throw new UsageError('unknown_step', `no initialised plan has a step '${q.step}' (see 'springfield show')`);
    if (plans.length === 1) return { planPath: plans[0] as string, anchor: q.step };
    const held = (await heldSteps(tx, q)).filter((h) => plans.includes(h.plan_path) && (h.anchor === q.step || h.has_substep));
    if (held.length === 1) return { planPath: (held[0] as HeldRow).plan_path, anchor: q.step };
    throw new UsageError('ambiguous_step', `several plans have a step '${q.step}' (${plans.join(', ')}): pass --plan PATH`);
  }
  const held = (await heldSteps(tx, q)).filter((h) => q.planPath === undefined || h.plan_path === q.planPath);
  if (held.length === 1) return { planPath: (held[0] as HeldRow).plan_path, anchor: (held[0] as HeldRow).anchor };
  const where = q.planPath ? ` in ${q.planPath}` : '';
  if (held.length === 0) throw new UsageError('no_claimed_step', `${q.worktree} holds no claimed step${where}: claim one first, or pass --step ANCHOR`);
  const list = held.map((h) => `${h.plan_path} ${h.anchor}`).join(', ');
  throw new UsageError('ambiguous_step', `${q.worktree} holds ${held.length} steps${where} (${list}): pass --step ANCHOR${q.planPath ? '' : ' and --plan PATH'}`);
}

interface HeldRow {
  plan_path: string;
  anchor: string;
  has_substep: boolean;
}

function heldSteps(tx: Tx, q: TargetQuery): Promise<HeldRow[]> {
  return tx.q<HeldRow>(`SELECT s.plan_path, s.anchor,
      EXISTS (SELECT 1 FROM steps c WHERE c.repo_id = s.repo_id AND c.plan_path = s.plan_path AND c.parent_anchor = s.anchor AND c.anchor = $5) AS has_substep
    FROM steps s WHERE s.repo_id = $1 AND s.parent_anchor IS NULL AND s.claimed_by = $2 AND s.claimed_host = $3 AND s.status IN ('claimed', 'in_progress')
      AND (s.claimed_agent IS NULL OR $4::text IS NULL OR s.claimed_agent = $4)
    ORDER BY s.plan_path, s.step_index`, [tx.repo, q.worktree, tx.host, q.agent, q.step ?? null]);
}
