import { buildBudget } from '../../core/epics/epicStore.ts';
import type { StateStore, StepView } from '../../core/store/types.ts';
import type { DashboardData } from '../../protocol/messages.ts';
import type { Snapshot } from '../model/snapshot.ts';

const WEEK_MS = 7 * 24 * 3600 * 1000;

/** What the dashboard shows, from a snapshot plus the event log and verification evidence. */
export async function dashboardData(store: StateStore, s: Snapshot, selected: string | null): Promise<DashboardData> {
  const byStatus: Record<string, number> = {};
  for (const e of s.epics) byStatus[e.status] = (byStatus[e.status] ?? 0) + 1;
  const allSteps = s.plans.flatMap((p) => p.steps.map((st) => ({ plan: p.plan_path, st })));
  const live = allSteps.filter(({ st }) => st.status === 'claimed' || st.status === 'in_progress');
  const planPath = selected && s.plans.some((p) => p.plan_path === selected) ? selected
    : s.plans.find((p) => p.status !== 'done' && p.steps.some((x) => x.status !== 'pending'))?.plan_path ?? s.plans[0]?.plan_path ?? null;
  const plan = s.plans.find((p) => p.plan_path === planPath);
  const [events, verifications] = await Promise.all([store.events({ limit: 40 }), store.verifications({ limit: 10 })]);
  const node = (st: StepView) => ({ anchor: st.anchor, title: st.title, status: st.lease_expired ? 'expired' : st.status, lease: st.status === 'completed' ? null : st.lease_expires_at, holder: st.status === 'completed' ? null : st.agent ?? st.claimed_by });
  return {
    now: s.now.toISOString(),
    figures: {
      byStatus, agentsRunning: s.runs.filter((r) => r.status === 'running').length, stepsClaimed: live.length,
      sessionsThisWeek: s.runs.filter((r) => s.now.getTime() - Date.parse(r.started_at) < WEEK_MS).length,
    },
    epics: s.epics.map((e) => {
      const p = s.plans.find((x) => x.epic_id === e.id);
      return {
        id: e.id, title: e.title, status: e.status, complexity: e.complexity, iteration: e.iteration, budget: buildBudget(e),
        planPath: p?.plan_path ?? null, stepsDone: p?.progress.steps_completed ?? 0, stepsTotal: p?.progress.steps_total ?? 0, awaitingApproval: s.awaitingApproval.has(e.id),
        sessions: s.runs.filter((r) => r.epic_id === e.id).reduce<Record<string, number>>((acc, r) => ({ ...acc, [r.role]: (acc[r.role] ?? 0) + 1 }), {}),
      };
    }),
    plans: s.plans.map((p) => ({ planPath: p.plan_path, title: p.title || p.plan_path, stepsDone: p.progress.steps_completed, stepsTotal: p.progress.steps_total })),
    selectedPlan: planPath,
    graph: plan ? {
      nodes: plan.steps.map(node),
      edges: plan.steps.flatMap((st) => [...st.depends_on, ...st.substeps.flatMap((x) => x.depends_on)].filter((d) => plan.steps.some((t) => t.anchor === d)).map((d) => [d, st.anchor] as const)),
    } : null,
    leases: live.map(({ plan: p, st }) => ({ planPath: p, anchor: st.anchor, holder: st.claimed_by ?? '', agent: st.agent, expiresAt: st.lease_expires_at ?? '' })).sort((a, b) => a.expiresAt.localeCompare(b.expiresAt)),
    runs: s.runs.slice(0, 15).map((r) => ({ id: r.id, role: r.role, epicId: r.epic_id, step: r.step_anchor, status: r.status, startedAt: r.started_at, exitCode: r.exit_code })),
    verifications: verifications.map((v) => ({ command: v.command, verdict: v.verdict, exitCode: v.exit_code, at: v.created_at, durationMs: v.duration_ms })),
    events: events.reverse().map((e) => ({
      id: e.id, at: e.at, who: e.agent ?? (e.worktree ? e.worktree.split('/').at(-1) ?? e.worktree : 'unknown'),
      what: `${e.entity} ${e.action} ${e.step_anchor ?? e.epic_id ?? e.plan_path ?? ''}${e.from_status || e.to_status ? ` ${e.from_status ?? '∅'} → ${e.to_status ?? '∅'}` : ''}`.trim(),
      reason: e.reason,
    })),
  };
}
