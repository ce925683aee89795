import { UsageError } from '../../errors.ts';
import type { CommitTarget, TargetQuery } from '../types.ts';
import { requireStep } from './rows.ts';
import type { Database } from './sqlite.ts';

/**
 * Finds the step to commit: the named one (in the named plan, or the one plan that has it), else
 * the single top-level step this worktree holds. None or several is a usage error.
 */
export function resolveTarget(db: Database, q: TargetQuery): CommitTarget {
  if (q.step !== undefined) {
    if (q.planPath !== undefined) return { planPath: requireStep(db, q.planPath, q.step).plan_path, anchor: q.step };
    const plans = db.prepare('SELECT plan_path FROM steps WHERE anchor = ? ORDER BY plan_path').pluck().all(q.step) as string[];
    if (plans.length === 0) throw new UsageError('unknown_step', `no initialised plan has a step '${q.step}' (see 'springfield show')`);
    if (plans.length === 1) return { planPath: plans[0] as string, anchor: q.step };
    const held = heldSteps(db, q).filter((h) => plans.includes(h.plan_path) && (h.anchor === q.step || h.has_substep === 1));
    if (held.length === 1) return { planPath: (held[0] as HeldRow).plan_path, anchor: q.step };
    throw new UsageError('ambiguous_step', `several plans have a step '${q.step}' (${plans.join(', ')}): pass --plan PATH`);
  }
  const held = heldSteps(db, q).filter((h) => q.planPath === undefined || h.plan_path === q.planPath);
  if (held.length === 1) return { planPath: (held[0] as HeldRow).plan_path, anchor: (held[0] as HeldRow).anchor };
  const where = q.planPath ? ` in ${q.planPath}` : '';
  if (held.length === 0) throw new UsageError('no_claimed_step', `${q.worktree} holds no claimed step${where}: claim one first, or pass --step ANCHOR`);
  const list = held.map((h) => `${h.plan_path} ${h.anchor}`).join(', ');
  throw new UsageError('ambiguous_step', `${q.worktree} holds ${held.length} steps${where} (${list}): pass --step ANCHOR${q.planPath ? '' : ' and --plan PATH'}`);
}

interface HeldRow {
  plan_path: string;
  anchor: string;
  has_substep: number;
}

function heldSteps(db: Database, q: TargetQuery): HeldRow[] {
  return db.prepare(`SELECT s.plan_path, s.anchor,
      EXISTS (SELECT 1 FROM steps c WHERE c.plan_path = s.plan_path AND c.parent_anchor = s.anchor AND c.anchor = @step) AS has_substep
    FROM steps s WHERE s.parent_anchor IS NULL AND s.claimed_by = @wt AND s.status IN ('claimed', 'in_progress')
      AND (s.claimed_agent IS NULL OR @agent IS NULL OR s.claimed_agent = @agent)
    ORDER BY s.plan_path, s.step_index`).all({ wt: q.worktree, agent: q.agent, step: q.step ?? null }) as HeldRow[];
}
