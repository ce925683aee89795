import type { Plan } from '../plan/types.ts';
import type { Complexity } from './complexity.ts';

/** What a handoff says of its epic. */
export interface HandoffEpic {
  readonly id: string;
  readonly title: string;
  readonly brief: string;
  readonly complexity: Complexity;
}

/** The handoff file name for an epic (docs/lifecycle.md, "The handoff belongs to the epic's branch"). */
export function handoffFileName(epicId: string): string {
  return `TODO-${epicId}.md`;
}

/** Intent from the brief, Approach and Constraints from the plan's prose sections. */
export function renderHandoff(epic: HandoffEpic, plan: Plan, planPath: string): string {
  const section = (name: string) => plan.sections[name]?.trim() || '_Not stated in the plan._';
  return [
    `# ${handoffFileName(epic.id)} — ${epic.title}`,
    '',
    `Plan: \`${planPath}\` · complexity: ${epic.complexity}`,
    '',
    '## Intent (immutable — from the brief)',
    '',
    epic.brief.trim() || '_No brief was given._',
    '',
    '## Approach (decided at plan approval)',
    '',
    section('Approach'),
    '',
    '## Constraints (inherited — not negotiable)',
    '',
    section('Constraints'),
    '',
  ].join('\n');
}
