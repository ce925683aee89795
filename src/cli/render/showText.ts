import type { PlanView, StepView } from '../../core/index.ts';
import { percent, percentBar } from '../../shared/format.ts';
import { until } from '../output.ts';

const KIND_LABELS = [
  ['task', 'Tasks:'],
  ['test', 'Tests:'],
  ['checkpoint', 'Checkpoints:'],
] as const;

/** The text of `show`: each step with per-kind progress bars, holders, leases and blockers. */
export function renderPlan(plan: PlanView, now: Date): string {
  const lines = [
    `Plan: ${plan.plan_path}${plan.title ? ` — ${plan.title}` : ''} [${plan.status}]${plan.epic_id ? ` (epic ${plan.epic_id})` : ''}`,
  ];
  for (const step of plan.steps) {
    lines.push('', ...renderStep(step, now, ''));
    for (const sub of step.substeps) lines.push('', ...renderStep(sub, now, '  '));
  }
  const { steps_completed: done, steps_total: total } = plan.progress;
  lines.push('', `Overall: ${done}/${total} steps complete (${percent(done, total, 100)}%)`);
  return lines.join('\n');
}

/** The text of `show PLAN STEP`: the step (or substep) with its substeps. */
export function renderStepTree(planPath: string, step: StepView, now: Date): string {
  const lines = [`Plan: ${planPath}`, '', ...renderStep(step, now, '')];
  for (const sub of step.substeps) lines.push('', ...renderStep(sub, now, '  '));
  return lines.join('\n');
}

function renderStep(step: StepView, now: Date, indent: string): string[] {
  const notes: string[] = [];
  if (step.claimed_by && step.status !== 'completed')
    notes.push(`claimed by ${step.claimed_by}${step.agent ? ` (${step.agent})` : ''}`);
  if (step.status === 'pending' && step.blocked_by.length > 0) notes.push(`blocked by: ${step.blocked_by.join(', ')}`);
  if (step.complete_reason) notes.push(`forced: "${step.complete_reason}"`);
  const out = [
    `${indent}Step ${step.number || step.anchor}: ${step.title} [${step.status}]${notes.length ? ` (${notes.join('; ')})` : ''}`,
  ];
  for (const [kind, label] of KIND_LABELS) {
    const items = step.items.filter((i) => i.kind === kind);
    if (items.length === 0) continue;
    const done = items.filter((i) => i.status === 'completed').length;
    out.push(`${indent}  ${label.padEnd(13)}${`${done}/${items.length}`.padEnd(6)}${percentBar(done, items.length)}`);
    if (step.status !== 'completed' && step.status !== 'pending') {
      for (const i of items)
        out.push(
          `${indent}    [${i.status === 'completed' ? 'x' : ' '}] ${i.text}${i.status === 'in_progress' ? '    ← in_progress' : ''}`,
        );
    }
  }
  if (step.commit_hash) out.push(`${indent}  Commit: ${step.commit_hash.slice(0, 12)}`);
  if (step.lease_expires_at && step.status !== 'completed')
    out.push(`${indent}  Lease: ${until(step.lease_expires_at, now)} · token ${step.claim_token}`);
  return out;
}
