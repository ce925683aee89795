import type { EpicRow } from '../../core/epics/epicStore.ts';
import type { PlanView, StepView } from '../../core/store/types.ts';
import type { Snapshot } from '../model/snapshot.ts';
import { baseName, leaseLeft, md, progressBar, SIGNAL_WORDS, STATUS_WORDS } from './format.ts';
import type { TreeNode } from './nodes.ts';

const EPIC_ICONS: Readonly<Record<string, { id: string; color?: string }>> = {
  planned: { id: 'circle-outline' },
  ready: { id: 'circle-large-outline', color: 'charts.blue' },
  in_progress: { id: 'circle-filled', color: 'charts.blue' },
  implemented: { id: 'eye', color: 'charts.purple' },
  verified: { id: 'verified-filled', color: 'charts.green' },
  done: { id: 'pass-filled', color: 'testing.iconPassed' },
  deferred: { id: 'history', color: 'disabledForeground' },
  blocked: { id: 'debug-pause', color: 'charts.red' },
};

/** Root rows of the Epics view: every epic, then plans that belong to no epic. */
export function epicsRoot(s: Snapshot): TreeNode[] {
  const byEpic = new Map(s.plans.filter((p) => p.epic_id).map((p) => [p.epic_id as string, p]));
  const epics = s.epics.map((e) => epicNode(s, e, byEpic.get(e.id)));
  const loose = s.plans.filter((p) => !p.epic_id || !s.epics.some((e) => e.id === p.epic_id)).map((p) => planNode(s, p));
  return [...epics, ...loose];
}

function epicNode(s: Snapshot, e: EpicRow, plan: PlanView | undefined): TreeNode {
  const awaiting = s.awaitingApproval.get(e.id);
  const facts = [STATUS_WORDS[e.status] ?? e.status];
  if (plan) facts.push(progressBar(plan.progress.steps_completed, plan.progress.steps_total));
  if (awaiting) facts.push('plan awaiting approval');
  else if (s.changesRequested.has(e.id)) facts.push('changes requested · Lisa revising');
  else if (e.status === 'blocked' && e.status_reason) facts.push(e.status_reason.split(':')[0]?.replace(/_/g, ' ') ?? '');
  facts.push(e.complexity);
  return {
    id: `epic:${e.id}`, kind: 'epic', label: `${e.id}  ${e.title}`, description: facts.join('  ·  '),
    icon: EPIC_ICONS[e.status], contextValue: `epic:${e.status}${awaiting ? ':awaitingApproval' : ''}`,
    collapsible: plan ? (e.status === 'in_progress' ? 'expanded' : 'collapsed') : awaiting ? 'collapsed' : 'none',
    ref: { epicId: e.id, planPath: plan?.plan_path },
    tooltip: () => [
      `**${md(e.id)}** ${md(e.title)}`, '',
      `Status: **${STATUS_WORDS[e.status]}**${e.status_reason ? ` — ${md(e.status_reason)}` : ''}`,
      `Complexity: ${e.complexity} · priority ${e.priority} · iteration ${e.iteration}`,
      plan ? `Plan: \`${plan.plan_path}\` — ${plan.progress.steps_completed}/${plan.progress.steps_total} steps, ${plan.progress.items_completed}/${plan.progress.items_total} items` : 'No approved plan yet',
      awaiting ? `Plan version ${awaiting.version} (\`${awaiting.plan_path}\`) waits for approval` : '',
      e.brief ? `\n---\n${md(e.brief.slice(0, 400))}` : '',
    ].filter(Boolean).join('\n\n'),
    children: () => plan ? plan.steps.map((st) => stepNode(s, plan, st)) : awaiting ? [noteNode(`epic:${e.id}:awaiting`, `Plan v${awaiting.version} awaiting approval — Review plan`, 'springfield.epic.reviewPlan', { epicId: e.id })] : [],
  };
}

function planNode(s: Snapshot, p: PlanView): TreeNode {
  return {
    id: `plan:${p.plan_path}`, kind: 'plan', label: p.title || p.plan_path,
    description: `${p.plan_path}  ·  ${progressBar(p.progress.steps_completed, p.progress.steps_total)}`,
    icon: { id: p.status === 'done' ? 'pass-filled' : 'list-tree', color: p.status === 'done' ? 'testing.iconPassed' : undefined },
    contextValue: `plan:${p.status}`, collapsible: 'expanded', ref: { planPath: p.plan_path },
    tooltip: () => `**${md(p.title || p.plan_path)}**\n\n\`${p.plan_path}\` · ${p.status}`,
    children: () => p.steps.map((st) => stepNode(s, p, st)),
  };
}

function noteNode(id: string, label: string, command: string, ref: TreeNode['ref']): TreeNode {
  return { id, kind: 'note', label, icon: { id: 'info' }, contextValue: 'note', collapsible: 'none', command: { command, title: label }, ref };
}

/** A step row: icon by status, progress and the one fact that matters most in the description. */
export function stepNode(s: Snapshot, plan: PlanView, st: StepView): TreeNode {
  const expired = st.lease_expired;
  const live = st.status === 'claimed' || st.status === 'in_progress';
  const mine = live && st.claimed_by === s.worktree;
  const blocked = st.status === 'pending' && st.blocked_by.length > 0;
  const icon = st.status === 'completed' ? { id: 'pass-filled', color: 'testing.iconPassed' }
    : expired ? { id: 'warning', color: 'charts.orange' }
    : st.status === 'in_progress' ? { id: 'sync~spin', color: 'charts.blue' }
    : st.status === 'claimed' ? { id: 'circle-filled', color: 'charts.yellow' }
    : blocked ? { id: 'lock', color: 'disabledForeground' }
    : { id: 'circle-large-outline' };
  const total = st.progress.total + st.substeps.reduce((n, x) => n + x.progress.total, 0);
  const done = st.progress.done + st.substeps.reduce((n, x) => n + x.progress.done, 0);
  const fact = st.status === 'completed' ? (st.commit_hash ? st.commit_hash.slice(0, 7) : st.complete_reason ? 'forced' : '')
    : live ? [st.agent ?? (mine ? 'you' : null), st.claimed_by ? baseName(st.claimed_by) : null, st.lease_expires_at ? leaseLeft(st.lease_expires_at, s.now) : null].filter(Boolean).join(' · ')
    : blocked ? `blocked by ${st.blocked_by.join(', ')}` : 'ready';
  const bar = total > 0 ? progressBar(done, total, Math.min(5, total)) : '';
  return {
    id: `step:${plan.plan_path}#${st.anchor}`, kind: 'step', label: `${st.anchor}  ${st.title}`,
    description: [bar, fact].filter(Boolean).join('   '), icon,
    contextValue: `step:${st.status}${mine ? ':held' : ''}${st.parent_anchor ? ':substep' : ''}`,
    collapsible: st.items.length + st.substeps.length === 0 ? 'none' : mine ? 'expanded' : 'collapsed',
    ref: { planPath: plan.plan_path, anchor: st.anchor, epicId: plan.epic_id ?? undefined },
    tooltip: () => stepTooltip(s, st),
    children: () => [...st.items.map((i) => ({
      id: `item:${i.id}`, kind: 'item' as const, label: i.text, description: i.kind === 'task' ? undefined : i.kind,
      checked: i.status === 'completed', contextValue: `item:${i.status}`, collapsible: 'none' as const,
      icon: i.status === 'in_progress' ? { id: 'sync~spin' } : undefined,
      ref: { planPath: plan.plan_path, anchor: st.anchor, itemId: i.id },
      tooltip: () => `${i.kind} ${i.ordinal} · ${i.status}${i.updated_by ? ` · by \`${i.updated_by}\`` : ''}`,
    })), ...st.substeps.map((sub) => stepNode(s, plan, sub))],
  };
}

function stepTooltip(s: Snapshot, st: StepView): string {
  const lines = [`**${md(st.anchor)}** ${md(st.title)}`, '', `Status: **${st.status}**${st.lease_expired ? ' (lease expired: reclaimable)' : ''}`];
  if (st.claimed_by) lines.push(`Holder: \`${st.claimed_by}\`${st.agent ? ` · agent ${md(st.agent)}` : ''} · claim token ${st.claim_token}`);
  if (st.lease_expires_at && st.status !== 'completed') lines.push(`Lease: ${leaseLeft(st.lease_expires_at, s.now)} (${st.lease_expires_at})`);
  lines.push(`Depends on: ${st.depends_on.length ? st.depends_on.join(', ') : 'nothing'}${st.blocked_by.length ? ` — waiting on ${st.blocked_by.join(', ')}` : ''}`);
  if (st.commit_hash) lines.push(`Commit: \`${st.commit_hash}\``);
  if (st.complete_reason) lines.push(`Forced: ${md(st.complete_reason)}`);
  return lines.join('\n\n');
}

/** Rows of the Signals view: newest first, awaiting a person on top, locations as children. */
export function signalsRoot(s: Snapshot): TreeNode[] {
  const sorted = [...s.signals].sort((a, b) => Number(b.status === 'awaiting_person') - Number(a.status === 'awaiting_person') || b.id - a.id);
  return sorted.map((sig) => ({
    id: `signal:${sig.id}`, kind: 'signal', label: `${SIGNAL_WORDS[sig.type] ?? sig.type} · ${sig.epic_id}`,
    description: `"${sig.summary}"${sig.locations.length ? ` (${sig.locations.length} place${sig.locations.length === 1 ? '' : 's'})` : ''}${sig.status === 'awaiting_person' ? ' · awaiting you' : sig.resolution ? ` · ${sig.resolution}` : ''}`,
    icon: sig.type === 'pass' ? { id: 'pass', color: 'testing.iconPassed' } : { id: 'warning', color: sig.status === 'awaiting_person' ? 'charts.yellow' : 'disabledForeground' },
    contextValue: `signal:${sig.status === 'awaiting_person' ? 'awaiting' : 'closed'}`,
    collapsible: sig.locations.length ? 'collapsed' : 'none', ref: { signalId: sig.id, epicId: sig.epic_id },
    tooltip: () => `**${SIGNAL_WORDS[sig.type]}** from ${md(sig.created_by ?? 'unknown')} at ${sig.created_at}\n\n${md(sig.summary)}`,
    children: () => sig.locations.map((l, i) => ({
      id: `signal:${sig.id}:loc:${i}`, kind: 'location' as const, label: `${l.file}:${l.line}${l.end_line ? `-${l.end_line}` : ''}`,
      description: l.note ?? undefined, icon: { id: 'location' }, contextValue: 'location', collapsible: 'none' as const,
      command: { command: 'springfield.signal.open', title: 'Open' }, ref: { signalId: sig.id, file: l.file, line: l.line },
    })),
  }));
}

/** Rows of the Agents view: running first, then the most recent ended runs. */
export function agentsRoot(s: Snapshot): TreeNode[] {
  const roles: Record<string, string> = { lisa: 'Lisa', ralph: 'Ralph', bart: 'Bart', lovejoy: 'Lovejoy', marge: 'Marge' };
  return s.runs.slice(0, 30).map((r) => {
    const running = r.status === 'running';
    const since = Date.parse(running ? r.started_at : r.ended_at ?? r.started_at);
    const mins = Math.max(0, Math.round((s.now.getTime() - since) / 60000));
    return {
      id: `run:${r.id}`, kind: 'run', label: [roles[r.role] ?? r.role, r.epic_id, r.step_anchor].filter(Boolean).join(' · '),
      description: running ? `running ${mins}m · iteration ${r.iteration}` : `${r.status}${r.exit_code !== null ? ` (exit ${r.exit_code})` : ''} · ${mins}m ago`,
      icon: running ? { id: r.role === 'bart' ? 'eye' : 'terminal', color: 'charts.blue' } : { id: r.exit_code === 0 ? 'pass' : 'error', color: r.exit_code === 0 ? 'testing.iconPassed' : 'charts.red' },
      contextValue: `run:${r.status}`, collapsible: 'none', ref: { runId: r.id, epicId: r.epic_id ?? undefined, planPath: r.plan_path ?? undefined, anchor: r.step_anchor ?? undefined },
      tooltip: () => `\`${md(r.command)}\`\n\nworktree \`${r.worktree ?? '?'}\` · started ${r.started_at}${r.ended_at ? ` · ended ${r.ended_at}` : ''}`,
    };
  });
}
