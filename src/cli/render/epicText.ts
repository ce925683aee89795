import {
  conflictRateLine,
  isCostBlockReason,
  pausedMessage,
  retryLines,
  type ConflictRate,
  type RoleRetry,
  type SignalView,
} from '../../core/index.ts';
import { progressBar } from '../../shared/format.ts';

interface EpicLine {
  id: string;
  title: string;
  status: string;
  status_reason: string | null;
  complexity: string;
  priority: string;
  iteration: number;
  build_budget: number;
}

export function renderEpicLine(e: EpicLine, progress: { steps_completed: number; steps_total: number } | null): string {
  const bar = progress ? `  ${progressBar(progress.steps_completed, progress.steps_total)}` : '';
  const why = e.status_reason && (e.status === 'blocked' || e.status === 'deferred') ? `: ${e.status_reason}` : '';
  return `${e.id}  ${e.title}  [${e.status}${why}]${bar}  ${e.complexity} · ${e.priority} · iteration ${e.iteration}/${e.build_budget}`;
}

interface EpicDetail extends EpicLine {
  planner: string;
  brief: string;
  plan_budget: number;
  plan_iteration: number;
  review: string;
  reviewer?: string;
  person_approval_before_merge: boolean;
  complexity_source: string;
  plan_versions: { version: number; status: string; plan_path: string; feedback: string | null; created_at: string }[];
  plan: {
    plan_path: string;
    status: string;
    progress: { steps_completed: number; steps_total: number; items_completed: number; items_total: number };
  } | null;
  signals: readonly SignalView[];
  blocked_by: Record<string, unknown> | null;
  retries: readonly RoleRetry[];
  limits?: readonly { readonly role: string; readonly message: string }[];
  waiting?: readonly { readonly message: string }[];
  recent_runs: readonly {
    id: number;
    role: string;
    step_anchor: string | null;
    status: string;
    exit_code: number | null;
    outcome_reason: string | null;
    ended_at: string | null;
  }[];
  conflicts_ahead?: readonly { with: string; files: readonly string[] }[];
  conflicts_at_merge?: ConflictRate;
  /** Spend against budget (docs/budgets.md): the line epic budget prints. */
  budget_line?: string;
}

export function renderEpic(e: EpicDetail): string {
  const lines = [
    `${e.id}: ${e.title} [${e.status}${e.status_reason ? `: ${e.status_reason}` : ''}]`,
    `  complexity ${e.complexity} (${e.complexity_source}) · priority ${e.priority} · ${e.reviewer === 'person' ? 'reviewed by a person' : `review ${e.review}`}${e.person_approval_before_merge ? ' · person approves merge' : ''}`,
    `  build iterations ${e.iteration}/${e.build_budget} · plan iterations ${e.plan_iteration}/${e.plan_budget} · planned by ${e.planner === 'person' ? 'a person' : 'Lisa'}`,
  ];
  if (e.budget_line) lines.push(`  ${e.budget_line}`);
  if (e.status === 'blocked' && isCostBlockReason(e.status_reason)) {
    lines.push(`  ${pausedMessage(e.id, e.status_reason ?? '')}`);
  } else if (e.blocked_by) {
    lines.push(`  a person decides: fix the cause, then springfield epic retry ${e.id}`);
    const tail = typeof e.blocked_by.output_tail === 'string' ? e.blocked_by.output_tail.trimEnd() : '';
    if (tail)
      lines.push(
        `  last output of run ${String(e.blocked_by.run_id)}:`,
        ...tail
          .split('\n')
          .slice(-10)
          .map((l) => `    | ${l}`),
      );
  }
  for (const line of retryLines(e.retries)) lines.push(`  backing off: ${line}`);
  for (const l of e.limits ?? []) lines.push(`  ${l.message} (${l.role})`);
  for (const w of e.waiting ?? []) lines.push(`  the scheduler holds it: ${w.message.replace(/^waiting: /, '')}`);
  for (const c of e.conflicts_ahead ?? [])
    lines.push(`  conflict ahead with ${c.with} in ${c.files.join(', ')} (a test merge; docs/files.md)`);
  const rate = e.conflicts_at_merge ? conflictRateLine(e.conflicts_at_merge) : null;
  if (rate) lines.push(`  ${rate}`);
  if (e.brief) lines.push('', ...e.brief.split('\n').map((l) => `  ${l}`));
  if (e.plan)
    lines.push(
      '',
      `  Plan ${e.plan.plan_path} [${e.plan.status}] ${progressBar(e.plan.progress.steps_completed, e.plan.progress.steps_total)} steps · ${e.plan.progress.items_completed}/${e.plan.progress.items_total} items`,
    );
  if (e.plan_versions.length) {
    lines.push('', '  Plan versions:');
    for (const v of e.plan_versions)
      lines.push(
        `    v${v.version} ${v.plan_path} [${v.status}] ${v.created_at}${v.feedback ? ` — feedback: ${v.feedback}` : ''}`,
      );
  }
  if (e.signals.length) {
    lines.push('', '  Signals:');
    for (const s of e.signals) {
      lines.push(
        `    #${s.id} ${s.type} — ${s.summary}${s.status === 'awaiting_person' ? ' (awaiting a person)' : s.resolution ? ` (${s.resolution})` : ''}`,
      );
      for (const l of s.locations)
        lines.push(`      ${l.file}:${l.line}${l.end_line ? `-${l.end_line}` : ''}${l.note ? `  ${l.note}` : ''}`);
    }
  }
  if (e.recent_runs.length) {
    lines.push('', '  Recent runs:');
    for (const r of e.recent_runs)
      lines.push(
        `    #${r.id} ${r.role}${r.step_anchor ? ` ${r.step_anchor}` : ''} [${r.status}]${r.exit_code !== null ? ` exit ${r.exit_code}` : ''}${r.outcome_reason ? ` — ${r.outcome_reason}` : ''}`,
      );
  }
  return lines.join('\n');
}
