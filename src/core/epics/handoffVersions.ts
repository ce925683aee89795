/**
 * The handoff as the epic's branch carries it (docs/lifecycle.md): the first approved version's
 * Intent / Approach / Constraints, immutable, then one section per re-plan saying what changed and
 * why. Rendered from the store's approved versions, so it is never read from (or written into) the main worktree.
 */
import { describeDrift, type PlanStructure } from '../plan/hash.ts';
import { parsePlan } from '../plan/parse.ts';
import { renderHandoff, type HandoffEpic } from './handoff.ts';

/** An approved plan version as the store keeps it, with why it replaced the one before (the re-plan's signal). */
export interface ApprovedVersion {
  readonly version: number;
  readonly plan_path: string;
  readonly structure: string;
  readonly body: string;
  readonly decided_at: string | null;
  /** The latest option_viability_failure / adr_invalidated signal before its approval (null for the first). */
  readonly why: { type: string; summary: string } | null;
}

/** The handoff text for the epic's approved versions (oldest first), or null before any approval. */
export function handoffText(epic: HandoffEpic, versions: readonly ApprovedVersion[]): string | null {
  const first = versions[0];
  if (!first) return null;
  const out = [renderHandoff(epic, parsePlan(first.body, first.plan_path), first.plan_path).trimEnd()];
  for (let i = 1; i < versions.length; i++) {
    const before = versions[i - 1] as ApprovedVersion;
    const v = versions[i] as ApprovedVersion;
    const why = v.why;
    const changes = describeDrift(
      JSON.parse(before.structure) as PlanStructure,
      JSON.parse(v.structure) as PlanStructure,
    );
    const approach = parsePlan(v.body, v.plan_path).sections.Approach?.trim();
    out.push(
      '',
      `## Re-plan: version ${v.version} of the plan (approved ${v.decided_at?.slice(0, 16).replace('T', ' ') ?? ''})`,
      '',
      `Why: ${why ? `${why.type.replace(/_/g, ' ')} — ${why.summary}` : 'a person approved a new plan'}`,
      '',
      'What changed:',
      ...(changes.length ? changes.map((c) => `- ${c}`) : ['- no structural change']),
      '',
      'Approach now:',
      '',
      approach || '_Not stated in the plan._',
    );
  }
  return out.join('\n') + '\n';
}
