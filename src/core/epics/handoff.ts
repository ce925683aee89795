import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Plan } from '../plan/types.ts';
import type { EpicRow } from './epicStore.ts';

/** The handoff file name for an epic (ADR-008 §2). */
export function handoffFileName(epicId: string): string {
  return `TODO-${epicId}.md`;
}

/** Intent from the brief, Approach and Constraints from the plan's prose sections. */
export function renderHandoff(epic: EpicRow, plan: Plan, planPath: string): string {
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

/** Writes the handoff once; an existing file is immutable and left as it is. Returns its path and whether it wrote. */
export function writeHandoffOnce(dir: string, epic: EpicRow, plan: Plan, planPath: string): { path: string; written: boolean } {
  const path = join(dir, handoffFileName(epic.id));
  if (existsSync(path)) return { path, written: false };
  writeFileSync(path, renderHandoff(epic, plan, planPath), { flag: 'wx' });
  return { path, written: true };
}
