import {
  type BudgetConfig,
  buildBudget,
  conflictRate,
  conflictRateLine,
  type EpicBudgetView,
  epicBudgetView,
  folderName,
  formatUsd,
  holderName,
  isCostBlockReason,
  isRetryable,
  pausedMessage,
  type PlanView,
  spendText,
  type StepView,
  type Store,
  UNDER_WAY,
} from '../../core/index.ts';
import type { ConflictsAhead } from '../model/conflictWatch.ts';
import type { DashboardData, GraphNode } from '../../protocol/messages.ts';
import { NOTHING, type NeedsYou } from '../model/needsYou.ts';
import type { Snapshot } from '../model/snapshot.ts';
import { ROLE_NAMES, stepName } from '../views/viewText.ts';
import { statsData, statsSince } from './statsData.ts';
import { timelineEntry, type TimelineNames, withoutReviewEchoes } from './timeline.ts';

const WEEK_MS = 7 * 24 * 3600 * 1000;
const TIMELINE = 80;

/** What the dashboard shows besides the snapshot: conflicts ahead (ConflictWatch) and the config's budget. */
export interface DashboardExtras {
  readonly ahead?: ConflictsAhead;
  /** `"budget"` of .springfield/config.json, as the scheduler reads it. */
  readonly budget?: BudgetConfig;
  /** Per epic waiting on a preset's usage limit, what its card says (epicLimitWaits). */
  readonly limitWaits?: ReadonlyMap<string, string>;
}

/** What the dashboard shows, from a snapshot plus the event log, verification evidence and spend. */
export async function dashboardData(
  store: Store,
  s: Snapshot,
  selected: string | null,
  needs: NeedsYou = NOTHING,
  extras: DashboardExtras = {},
): Promise<DashboardData> {
  const byStatus: Record<string, number> = {};
  for (const e of s.epics) byStatus[e.status] = (byStatus[e.status] ?? 0) + 1;
  const live = s.plans.flatMap((p) =>
    p.steps.filter((st) => st.status === 'claimed' || st.status === 'in_progress').map((st) => ({ plan: p, st })),
  );
  const planPath =
    selected && s.plans.some((p) => p.plan_path === selected)
      ? selected
      : (s.plans.find((p) => p.status !== 'done' && p.steps.some((x) => x.status !== 'pending'))?.plan_path ??
        s.plans[0]?.plan_path ??
        null);
  const plan = s.plans.find((p) => p.plan_path === planPath);
  const epicTitle = new Map(s.epics.map((e) => [e.id, e.title]));
  // Lease renewals are many and say little: the leases table shows them as countdowns instead.
  const [events, verifications, debt, budgets, report, statsRows, rates] = await Promise.all([
    store.events({ limit: TIMELINE * 4 }),
    store.verifications({ limit: 10 }),
    store.debt(),
    Promise.all(s.epics.map((e) => epicBudgetView(store, e, extras.budget))),
    store.spend(),
    store.statsRows(statsSince(s.now)),
    // The conflicts each epic's merges met and who resolved them (docs/files.md).
    Promise.all(s.epics.map(async (e) => conflictRateLine(conflictRate(await store.events({ epicId: e.id }))))),
  ]);
  const budgetOf = new Map(s.epics.map((e, i) => [e.id, budgets[i] as EpicBudgetView]));
  const daily = extras.budget?.dailyUsd ?? null;
  const names = timelineNames(s);
  const runs = s.runs.slice(0, 15);
  return {
    now: s.now.toISOString(),
    needsYou: {
      items: needs.items.map((i) => ({ key: i.key, text: i.text, label: i.label, epicId: i.epicId })),
      idle: needs.idle,
      fleet: needs.fleet,
    },
    figures: {
      epics: s.epics.length,
      byStatus,
      agentsRunning: s.runs.filter((r) => r.status === 'running').length,
      stepsClaimed: live.length,
      sessionsThisWeek: s.runs.filter((r) => s.now.getTime() - Date.parse(r.started_at) < WEEK_MS).length,
      today: {
        usd: formatUsd(report.today.usd),
        limit: daily === null ? null : formatUsd(daily),
        spent: daily !== null && report.today.usd >= daily,
      },
    },
    epics: s.epics.map((e) => {
      const p = s.plans.find((x) => x.epic_id === e.id);
      return {
        id: e.id,
        title: e.title,
        status: e.status,
        complexity: e.complexity,
        iteration: e.iteration,
        budget: buildBudget(e),
        planPath: p?.plan_path ?? null,
        planTitle: p ? p.title || p.plan_path : null,
        stepsDone: p?.progress.steps_completed ?? 0,
        stepsTotal: p?.progress.steps_total ?? 0,
        awaitingApproval: s.awaitingApproval.has(e.id),
        // A fault's reason is already words (who failed, how often, the last output); other blocks by their kind.
        blockedReason:
          e.status !== 'blocked' || !e.status_reason || isCostBlockReason(e.status_reason)
            ? null
            : isRetryable(e)
              ? e.status_reason.replace(/^(agent_failed|plan_drift|merge_failed): /, '')
              : (e.status_reason.split(':')[0] ?? '').replace(/_/g, ' '),
        retryable: isRetryable(e),
        worktree:
          e.worktree_path && e.status !== 'done' ? { name: folderName(e.worktree_path), path: e.worktree_path } : null,
        sessions: s.runs
          .filter((r) => r.epic_id === e.id)
          .reduce<Record<string, number>>((acc, r) => ({ ...acc, [r.role]: (acc[r.role] ?? 0) + 1 }), {}),
        ...usageOf(s.runs.filter((r) => r.epic_id === e.id)),
        spend: spendLines(budgetOf.get(e.id)),
        paused:
          e.status === 'blocked' && isCostBlockReason(e.status_reason)
            ? pausedMessage(e.id, e.status_reason ?? '')
            : null,
        limitWait: extras.limitWaits?.get(e.id) ?? null,
        conflictsAhead: (UNDER_WAY.includes(e.status) ? (extras.ahead?.get(e.id) ?? []) : []).map((c) => ({
          with: c.with,
          withTitle: epicTitle.get(c.with) ?? c.with,
          files: [...c.files],
        })),
        conflictsAtMerge: rates[s.epics.indexOf(e)] ?? null,
      };
    }),
    plans: s.plans.map((p) => ({
      planPath: p.plan_path,
      title: p.title || p.plan_path,
      epicId: p.epic_id,
      stepsDone: p.progress.steps_completed,
      stepsTotal: p.progress.steps_total,
    })),
    selectedPlan: planPath,
    graph: plan ? graphOf(plan, s.worktree) : null,
    leases: live
      .map(({ plan: p, st }) => ({
        planPath: p.plan_path,
        planTitle: p.title || p.plan_path,
        epicId: p.epic_id,
        epicTitle: p.epic_id ? (epicTitle.get(p.epic_id) ?? null) : null,
        anchor: st.anchor,
        step: stepName(st.number),
        stepTitle: st.title,
        holder: holderName(st.claimed_by, st.agent, s.worktree),
        expiresAt: st.lease_expires_at ?? '',
      }))
      .sort((a, b) => a.expiresAt.localeCompare(b.expiresAt)),
    runs: runs.map((r) => ({
      id: r.id,
      role: ROLE_NAMES[r.role] ?? r.role,
      epicId: r.epic_id,
      step: r.step_anchor
        ? ((r.plan_path ? names.stepName.get(`${r.plan_path}#${r.step_anchor}`) : undefined) ?? r.step_anchor)
        : null,
      status: r.status,
      startedAt: r.started_at,
      exitCode: r.exit_code,
      reason: r.outcome_reason,
      outputTail: r.status === 'succeeded' ? '' : r.output_tail.split('\n').slice(-10).join('\n'),
    })),
    verifications: verifications.map((v) => ({
      command: v.command,
      verdict: v.verdict,
      exitCode: v.exit_code,
      at: v.created_at,
      durationMs: v.duration_ms,
      epicId: v.epic_id,
    })),
    stats: statsData(statsRows),
    debt: debt.map((d) => ({ epicId: d.epic_id, title: d.title, reason: d.reason, at: d.recorded_at })),
    epicTitles: Object.fromEntries(s.epics.map((e) => [e.id, e.title])),
    events: withoutReviewEchoes(events.reverse())
      .filter((e) => !(e.entity === 'step' && e.action === 'heartbeat'))
      .slice(0, TIMELINE)
      .map((e) => timelineEntry(e, names)),
  };
}

/** The limits set on an epic, each as "$4.20 of $20" with the share spent; none when no limit is set. */
function spendLines(view: EpicBudgetView | undefined): DashboardData['epics'][number]['spend'] {
  if (!view) return [];
  return [view.usd, view.tokens, view.minutes]
    .filter((l) => l.limit !== null)
    .map((l) => ({
      kind: l.kind,
      text: spendText(l),
      share: l.limit ? l.spent / l.limit : 0,
      own: l.source === 'epic',
    }));
}

/** What the epic's runs reported: summed cost and tokens, each null when no run reported it. */
function usageOf(runs: Snapshot['runs']): { costUsd: number | null; tokens: number | null } {
  let costUsd: number | null = null;
  let tokens: number | null = null;
  for (const r of runs) {
    if (r.cost_usd != null) costUsd = (costUsd ?? 0) + r.cost_usd;
    if (r.input_tokens != null || r.output_tokens != null)
      tokens = (tokens ?? 0) + (r.input_tokens ?? 0) + (r.output_tokens ?? 0);
  }
  return { costUsd, tokens };
}

function timelineNames(s: Snapshot): TimelineNames {
  const stepNames = new Map<string, string>();
  for (const p of s.plans)
    for (const st of p.steps.flatMap((x) => [x, ...x.substeps]))
      stepNames.set(`${p.plan_path}#${st.anchor}`, `${stepName(st.number)} (${st.title})`);
  return {
    self: s.worktree,
    epicOfPlan: new Map(s.plans.filter((p) => p.epic_id).map((p) => [p.plan_path, p.epic_id as string])),
    planTitle: new Map(s.plans.map((p) => [p.plan_path, p.title])),
    stepName: stepNames,
  };
}

/** The plan's top-level steps as graph nodes (substeps go with their parent), with status words the legend uses. */
function graphOf(plan: PlanView, self: string): NonNullable<DashboardData['graph']> {
  const node = (st: StepView): GraphNode => {
    const live = st.status === 'claimed' || st.status === 'in_progress';
    const status = st.lease_expired
      ? 'expired'
      : st.status === 'pending'
        ? st.blocked_by.length
          ? 'waiting'
          : 'ready'
        : st.status;
    return {
      anchor: st.anchor,
      name: stepName(st.number),
      title: st.title,
      status,
      lease: live ? st.lease_expires_at : null,
      holder: live ? holderName(st.claimed_by, st.agent, self) : null,
    };
  };
  const top = new Set(plan.steps.map((t) => t.anchor));
  return {
    nodes: plan.steps.map(node),
    edges: plan.steps.flatMap((st) =>
      [...new Set([...st.depends_on, ...st.substeps.flatMap((x) => x.depends_on)])]
        .filter((d) => top.has(d) && d !== st.anchor)
        .map((d) => [d, st.anchor] as const),
    ),
  };
}
