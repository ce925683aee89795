/**
 * The handoff as the epic's branch carries it (docs/lifecycle.md): the first approved version's
 * Intent / Approach / Constraints, immutable, then one section per re-plan saying what changed and
 * why. Rendered from the store, so it is never read from (or written into) the main worktree.
 */
import { describeDrift, type PlanStructure } from '../plan/hash.ts';
import { parsePlan } from '../plan/parse.ts';
import type { Database } from '../store/sqlite/sqlite.ts';
import type { EpicRow } from './epicStore.ts';
import { renderHandoff } from './handoff.ts';

interface ApprovedRow {
  version: number;
  plan_path: string;
  structure: string;
  body: string;
  decided_at: string | null;
}

/** The handoff text for the epic's approved versions, or null before any approval. */
export function handoffText(db: Database, epic: EpicRow): string | null {
  const versions = db.prepare(`SELECT version, plan_path, structure, body, decided_at FROM plan_versions WHERE epic_id = ? AND status = 'approved' ORDER BY version`)
    .all(epic.id) as ApprovedRow[];
  const first = versions[0];
  if (!first) return null;
  const out = [renderHandoff(epic, parsePlan(first.body, first.plan_path), first.plan_path).trimEnd()];
  for (let i = 1; i < versions.length; i++) {
    const before = versions[i - 1] as ApprovedRow;
    const v = versions[i] as ApprovedRow;
    const why = db.prepare(`SELECT type, summary FROM signals WHERE epic_id = ? AND type IN ('option_viability_failure', 'adr_invalidated') AND created_at <= ? ORDER BY id DESC LIMIT 1`)
      .get(epic.id, v.decided_at ?? '9999') as { type: string; summary: string } | undefined;
    const changes = describeDrift(JSON.parse(before.structure) as PlanStructure, JSON.parse(v.structure) as PlanStructure);
    const approach = parsePlan(v.body, v.plan_path).sections.Approach?.trim();
    out.push('', `## Re-plan: version ${v.version} of the plan (approved ${v.decided_at?.slice(0, 16).replace('T', ' ') ?? ''})`, '',
      `Why: ${why ? `${why.type.replace(/_/g, ' ')} — ${why.summary}` : 'a person approved a new plan'}`, '',
      'What changed:', ...(changes.length ? changes.map((c) => `- ${c}`) : ['- no structural change']), '',
      'Approach now:', '', approach || '_Not stated in the plan._');
  }
  return out.join('\n') + '\n';
}
