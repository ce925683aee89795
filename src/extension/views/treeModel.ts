import {
  buildBudget,
  COMPLEXITY_POLICY,
  type EpicRow,
  isRetryable,
  type PlanView,
  type RunView,
  type StepView,
} from '../../core/index.ts';
import { blockedFact } from '../model/epicFacts.ts';
import { NOTHING, type NeedsYou, type NeedsYouItem } from '../model/needsYou.ts';
import type { Snapshot } from '../model/snapshot.ts';
import {
  ago,
  baseName,
  holderName,
  leaseLeft,
  leaseShort,
  md,
  progressBar,
  signalWords,
  since,
  statusWord,
  stepName,
  type Live,
} from './viewText.ts';
import type { TreeNode } from './nodes.ts';
import { needsYouRoot } from './needsYouNodes.ts';
import { commandArgv, shortCommand } from '../../shared/commandText.ts';
import { roleSpec } from '../../shared/roles.ts';

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

/** Root rows of the Epics view: what needs the person, every epic, then plans that belong to no epic. */
export function epicsRoot(s: Snapshot, needs: NeedsYou = NOTHING): TreeNode[] {
  const byEpic = new Map(s.plans.filter((p) => p.epic_id).map((p) => [p.epic_id as string, p]));
  const epics = s.epics.map((e) =>
    epicNode(
      s,
      e,
      byEpic.get(e.id),
      needs.items.find((i) => i.epicId === e.id),
      needs.held.get(e.id),
    ),
  );
  const loose = s.plans
    .filter((p) => !p.epic_id || !s.epics.some((e) => e.id === p.epic_id))
    .map((p) => planNode(s, p));
  return [...needsYouRoot(needs, s.now), ...epics, ...loose];
}

/**
 * An epic row that fits a 300 px sidebar: the title, then the one fact that matters (what it waits
 * for, why it is blocked, its state), progress and where its worktree is; id, complexity and paths
 * are in the tooltip.
 */
function epicNode(
  s: Snapshot,
  e: EpicRow,
  plan: PlanView | undefined,
  need: NeedsYouItem | undefined,
  held: string | undefined,
): TreeNode {
  const awaiting = s.awaitingApproval.get(e.id);
  // What the person must do first; else why the scheduler holds it (not "Lisa writes its plan" while she may not).
  const facts = [need?.fact ?? held ?? epicState(s, e)];
  if (plan) facts.push(progressBar(plan.progress.steps_completed, plan.progress.steps_total));
  const worktree = e.worktree_path && e.status !== 'done' ? e.worktree_path : null;
  if (worktree) facts.push(`in ${baseName(worktree)}`);
  const retryable = isRetryable(e);
  // A merged epic says when ("merged 2 min ago"), kept current by the live clock.
  const merged = e.status === 'done' && !need;
  const describe = (now: Date): Live => {
    const t = ago(e.updated_at, now);
    return { text: [`merged ${t.text}`, ...facts.slice(1)].join(' · '), nextMs: t.nextMs };
  };
  return {
    id: `epic:${e.id}`,
    kind: 'epic',
    label: e.title,
    description: merged ? describe(s.now).text : facts.join(' · '),
    live: merged ? describe : undefined,
    icon: EPIC_ICONS[e.status],
    contextValue: `epic:${e.status}${awaiting ? ':awaitingApproval' : ''}${retryable ? ':retry' : ''}${need?.action.kind === 'approveMerge' ? ':mergeApproval' : ''}${worktree ? `:worktree:${s.appsRunning.has(e.id) ? 'appRunning' : 'appStopped'}` : ''}`,
    collapsible: plan
      ? e.status === 'in_progress'
        ? 'expanded'
        : 'collapsed'
      : awaiting
        ? 'collapsed'
        : nextMove(s, e)
          ? 'expanded'
          : 'none',
    ref: { epicId: e.id, planPath: plan?.plan_path },
    tooltip: () =>
      [
        `**${md(e.title)}** · ${md(e.id)}`,
        `Status: **${statusWord(e.status)}**${e.status_reason ? ` — ${md(e.status_reason)}` : ''}`,
        need ? `Needs you: ${md(need.text)}` : '',
        held && !need ? `The scheduler holds it: ${md(held)}` : '',
        `Complexity: ${e.complexity} · priority ${e.priority} · iteration ${e.iteration} · plan written by ${e.planner === 'person' ? 'a person' : 'Lisa'}`,
        plan
          ? `Plan: \`${plan.plan_path}\` — ${plan.progress.steps_completed}/${plan.progress.steps_total} steps, ${plan.progress.items_completed}/${plan.progress.items_total} items`
          : 'No approved plan yet',
        worktree ? `Worktree: \`${worktree}\`${e.branch ? ` on branch \`${e.branch}\`` : ''}` : '',
        awaiting ? `Plan version ${awaiting.version} (\`${awaiting.plan_path}\`) waits for approval` : '',
        retryable
          ? 'Nothing runs for it until a person retries: fix the cause, then **Retry** (right-click), or `springfield epic retry`'
          : '',
        e.brief ? `\n---\n${md(e.brief.slice(0, 400))}` : '',
      ]
        .filter(Boolean)
        .join('\n\n'),
    children: () => {
      if (plan) return plan.steps.map((st) => stepNode(s, plan, st));
      if (awaiting)
        return [
          noteNode(
            `epic:${e.id}:awaiting`,
            `Plan version ${awaiting.version} waits for your approval: Review plan`,
            'springfield.epic.reviewPlan',
            { epicId: e.id },
          ),
        ];
      const move = nextMove(s, e);
      return move ? [noteNode(`epic:${e.id}:next`, move.label, move.command, { epicId: e.id })] : [];
    },
  };
}

/** The state of an epic nothing asks the person about: "in progress", "Lisa writes its plan", "blocked: plan drift". */
function epicState(s: Snapshot, e: EpicRow): string {
  if (s.changesRequested.has(e.id)) return e.planner === 'person' ? 'changes requested' : 'Lisa revising the plan';
  if (e.status === 'blocked' && e.status_reason) return `blocked: ${blockedFact(e)}`;
  if (e.status === 'planned') return e.planner === 'person' ? 'waits for your plan' : 'Lisa writes its plan';
  return statusWord(e.status);
}

/** What an epic without a plan in the store needs next: a plan written, or one revised. */
function nextMove(s: Snapshot, e: EpicRow): { label: string; command: string } | undefined {
  if (e.status !== 'planned' && e.status !== 'blocked') return undefined;
  if (s.changesRequested.has(e.id))
    return { label: 'Changes requested: revise the plan, then Propose plan…', command: 'springfield.epic.proposePlan' };
  if (e.status === 'planned')
    return {
      label:
        e.planner === 'person'
          ? 'No plan yet: New plan…'
          : 'Lisa writes its plan when the scheduler runs (or: New plan…)',
      command: 'springfield.plan.new',
    };
  return undefined;
}

function planNode(s: Snapshot, p: PlanView): TreeNode {
  return {
    id: `plan:${p.plan_path}`,
    kind: 'plan',
    label: p.title || p.plan_path,
    // Its state, not its path (the path is in the tooltip).
    description: `${statusWord(p.status)} · ${progressBar(p.progress.steps_completed, p.progress.steps_total)}`,
    icon: {
      id: p.status === 'done' ? 'pass-filled' : 'list-tree',
      color: p.status === 'done' ? 'testing.iconPassed' : undefined,
    },
    contextValue: `plan:${p.status}`,
    collapsible: 'expanded',
    ref: { planPath: p.plan_path },
    tooltip: () => `**${md(p.title || p.plan_path)}**\n\n\`${p.plan_path}\` · ${statusWord(p.status)}`,
    children: () => p.steps.map((st) => stepNode(s, p, st)),
  };
}

function noteNode(id: string, label: string, command: string, ref: TreeNode['ref']): TreeNode {
  return {
    id,
    kind: 'note',
    label,
    icon: { id: command === 'springfield.plan.new' ? 'new-file' : 'info' },
    contextValue: 'note',
    collapsible: 'none',
    command: { command, title: label },
    ref,
  };
}

/**
 * A step row that fits 300 px: its title (the number is in the tooltip), then the one fact that
 * matters (who holds it and the lease left, what it waits for), the bar last.
 */
export function stepNode(s: Snapshot, plan: PlanView, st: StepView): TreeNode {
  const expired = st.lease_expired;
  const live = st.status === 'claimed' || st.status === 'in_progress';
  const mine = live && st.claimed_by === s.worktree;
  const blocked = st.status === 'pending' && st.blocked_by.length > 0;
  const icon =
    st.status === 'completed'
      ? { id: 'pass-filled', color: 'testing.iconPassed' }
      : expired
        ? { id: 'warning', color: 'charts.orange' }
        : st.status === 'in_progress'
          ? { id: 'sync~spin', color: 'charts.blue' }
          : st.status === 'claimed'
            ? { id: 'circle-filled', color: 'charts.yellow' }
            : blocked
              ? { id: 'lock', color: 'disabledForeground' }
              : { id: 'circle-large-outline' };
  const total = st.progress.total + st.substeps.reduce((n, x) => n + x.progress.total, 0);
  const done = st.progress.done + st.substeps.reduce((n, x) => n + x.progress.done, 0);
  const bar = total > 0 ? progressBar(done, total, Math.min(5, total)) : '';
  const names = stepNames(plan);
  // Who holds it, shortest first: an agent by its id, "you" here, else the worktree a person holds it in.
  const holder = !live ? '' : (st.agent ?? (mine ? 'you' : st.claimed_by ? `in ${baseName(st.claimed_by)}` : ''));
  // A completed step says when (its commit is in the tooltip): "done 2 min ago".
  const fact =
    st.status === 'completed'
      ? st.complete_reason
        ? 'completed with open items'
        : ''
      : blocked
        ? `waits for ${st.blocked_by.map((a) => stepTitles(plan).get(a) ?? a).join(', ')}`
        : live
          ? holder
          : 'ready';
  // The holder and the lease first ("ralph-a · 1h45m"), the bar last: at 300 px the end of a row is what is cut.
  const completedAt = st.status === 'completed' ? st.completed_at : null;
  const describe = (now: Date): Live => {
    const lease = live && st.lease_expires_at ? leaseShort(st.lease_expires_at, now) : undefined;
    const done = completedAt ? ago(completedAt, now) : undefined;
    const when = done ? `done ${done.text}` : undefined;
    return {
      text: [fact, when, lease?.text, bar].filter(Boolean).join(' · '),
      nextMs: lease?.nextMs ?? done?.nextMs ?? Infinity,
    };
  };
  return {
    id: `step:${plan.plan_path}#${st.anchor}`,
    kind: 'step',
    label: st.title,
    description: describe(s.now).text,
    live: (live && st.lease_expires_at) || completedAt ? describe : undefined,
    icon,
    contextValue: `step:${st.status}${mine ? ':held' : live && st.claimed_by ? ':elsewhere' : ''}${live && st.agent ? ':agent' : ''}${st.parent_anchor ? ':substep' : ''}`,
    collapsible: st.items.length + st.substeps.length === 0 ? 'none' : mine ? 'expanded' : 'collapsed',
    ref: { planPath: plan.plan_path, anchor: st.anchor, epicId: plan.epic_id ?? undefined },
    tooltip: () => stepTooltip(s, st, names),
    children: () => [
      ...st.items.map((i) => ({
        id: `item:${i.id}`,
        kind: 'item' as const,
        label: i.text,
        description: i.kind === 'task' ? undefined : i.kind,
        checked: i.status === 'completed',
        contextValue: `item:${i.status}`,
        collapsible: 'none' as const,
        icon: i.status === 'in_progress' ? { id: 'sync~spin' } : undefined,
        ref: { planPath: plan.plan_path, anchor: st.anchor, itemId: i.id },
        tooltip: () =>
          `${KIND_WORDS[i.kind] ?? i.kind} of ${stepName(st.number)} · ${statusWord(i.status)}${i.updated_by ? ` · last changed by ${md(holderName(i.updated_by, null, s.worktree))}` : ''}`,
      })),
      ...st.substeps.map((sub) => stepNode(s, plan, sub)),
    ],
  };
}

/** What a step's status means, in a newcomer's words: claimed and started are not the same. */
const STEP_MEANING: Readonly<Record<string, string>> = {
  claimed: ' — taken under a lease, not started yet',
  in_progress: ' — started: its holder is working on it',
  pending: ' — nobody has taken it yet',
};

const KIND_WORDS: Readonly<Record<string, string>> = { task: 'Task', test: 'Test', checkpoint: 'Checkpoint' };

const namesByPlan = new WeakMap<PlanView, Map<string, string>>();
const titlesByPlan = new WeakMap<PlanView, Map<string, string>>();

/** Anchor → title for every step and substep of a plan (rows name the steps they wait for by title). */
function stepTitles(plan: PlanView): Map<string, string> {
  let titles = titlesByPlan.get(plan);
  if (!titles)
    titlesByPlan.set(
      plan,
      (titles = new Map(plan.steps.flatMap((st) => [st, ...st.substeps]).map((st) => [st.anchor, st.title]))),
    );
  return titles;
}

/** Anchor → "Step 2.1" for every step and substep of a plan; built once per plan of a snapshot (every step row asks). */
function stepNames(plan: PlanView): Map<string, string> {
  let names = namesByPlan.get(plan);
  if (!names)
    namesByPlan.set(
      plan,
      (names = new Map(plan.steps.flatMap((st) => [st, ...st.substeps]).map((st) => [st.anchor, stepName(st.number)]))),
    );
  return names;
}

function stepTooltip(s: Snapshot, st: StepView, names: ReadonlyMap<string, string>): string {
  const expired = st.lease_expired ? ' — its lease expired, so anyone may take it over' : '';
  const lines = [
    `**${md(stepName(st.number))}** ${md(st.title)}`,
    '',
    `Status: **${statusWord(st.status)}**${expired || (STEP_MEANING[st.status] ?? '')}`,
  ];
  if (st.claimed_by && st.status !== 'completed') {
    const who = holderName(st.claimed_by, st.agent, s.worktree);
    lines.push(
      `Held by ${md(who)}${who === baseName(st.claimed_by) ? '' : ` in ${md(baseName(st.claimed_by))}`} · claim token ${st.claim_token}`,
    );
  }
  if (st.lease_expires_at && st.status !== 'completed')
    lines.push(
      `Lease: ${leaseLeft(st.lease_expires_at, new Date()).text} (until ${new Date(st.lease_expires_at).toLocaleTimeString()})`,
    );
  const deps = st.depends_on.map((a) => names.get(a) ?? a);
  lines.push(
    `Depends on: ${deps.length ? deps.join(', ') : 'nothing'}${st.blocked_by.length ? ` — waiting for ${st.blocked_by.map((a) => names.get(a) ?? a).join(', ')}` : ''}`,
  );
  if (st.completed_at)
    lines.push(
      `Completed ${ago(st.completed_at, new Date()).text}${st.commit_hash ? ` in commit \`${st.commit_hash.slice(0, 7)}\`` : ''}`,
    );
  if (st.complete_reason) lines.push(`Completed with open items: ${md(st.complete_reason)}`);
  lines.push(`Anchor: #${md(st.anchor)}`);
  return lines.join('\n\n');
}

/** Rows of the Signals view: newest first, awaiting a person on top, locations as children. */
export function signalsRoot(s: Snapshot): TreeNode[] {
  const sorted = [...s.signals].sort(
    (a, b) => Number(b.status === 'awaiting_person') - Number(a.status === 'awaiting_person') || b.id - a.id,
  );
  const done = new Set(s.epics.filter((e) => e.status === 'done').map((e) => e.id));
  return sorted.map((sig) => {
    // A done epic's old signals are settled: what they asked for was built, reviewed and merged.
    const settled = done.has(sig.epic_id) && sig.status !== 'awaiting_person';
    return signalNode(s, sig, settled);
  });
}

function signalNode(s: Snapshot, sig: Snapshot['signals'][number], settled: boolean): TreeNode {
  const places = sig.locations.length ? ` (${sig.locations.length} place${sig.locations.length === 1 ? '' : 's'})` : '';
  const state =
    sig.status === 'awaiting_person'
      ? ' · awaiting you'
      : settled
        ? ' · settled: the epic is done'
        : sig.resolution
          ? ` · ${sig.resolution}`
          : '';
  return {
    id: `signal:${sig.id}`,
    kind: 'signal',
    label: `${signalWords(sig)} · ${s.epics.find((e) => e.id === sig.epic_id)?.title ?? sig.epic_id}`,
    description: `"${sig.summary}"${places}${state}`,
    icon: settled
      ? { id: 'check', color: 'disabledForeground' }
      : sig.type === 'pass'
        ? { id: 'pass', color: 'testing.iconPassed' }
        : { id: 'warning', color: sig.status === 'awaiting_person' ? 'charts.yellow' : 'disabledForeground' },
    contextValue: `signal:${sig.status === 'awaiting_person' ? 'awaiting' : 'closed'}`,
    collapsible: sig.locations.length ? 'collapsed' : 'none',
    ref: { signalId: sig.id, epicId: sig.epic_id },
    tooltip: () =>
      `**${signalWords(sig)}** on ${md(sig.epic_id)} from ${md(holderName(sig.created_by, null, s.worktree))}, ${ago(sig.created_at, new Date()).text}\n\n${md(sig.summary)}${sig.status === 'decided' && sig.resolution ? `\n\nDecided: ${md(sig.resolution)}${sig.resolved_by ? ` by ${md(holderName(sig.resolved_by, null, s.worktree))}` : ''}` : ''}`,
    children: () =>
      sig.locations.map((l, i) => ({
        id: `signal:${sig.id}:loc:${i}`,
        kind: 'location' as const,
        label: `${l.file}:${l.line}${l.end_line ? `-${l.end_line}` : ''}`,
        description: l.note ?? undefined,
        icon: { id: 'location' },
        contextValue: 'location',
        collapsible: 'none' as const,
        command: { command: 'springfield.signal.open', title: 'Open' },
        ref: { signalId: sig.id, file: l.file, line: l.line },
      })),
  };
}

/** Rows of the Agents view: running first, then the most recent ended runs with their outcome. */
export function agentsRoot(s: Snapshot): TreeNode[] {
  const names = new Map(s.plans.map((p) => [p.plan_path, stepNames(p)]));
  const titles = new Map(s.epics.map((e) => [e.id, e.title]));
  return s.runs.slice(0, 30).map((r) => {
    const running = r.status === 'running';
    const ok = r.status === 'succeeded';
    const step = r.step_anchor
      ? ((r.plan_path ? names.get(r.plan_path)?.get(r.step_anchor) : undefined) ?? r.step_anchor)
      : null;
    const outcome = `${statusWord(r.status)}${r.exit_code !== null && !ok ? ` (exit ${r.exit_code})` : ''}`;
    const tail = r.output_tail.trimEnd().split('\n').slice(-10).join('\n').replace(/`/g, "'");
    const iteration = iterationText(
      r,
      s.epics.find((e) => e.id === r.epic_id),
    );
    const role = roleSpec(r.role)?.name ?? r.role;
    const epicTitle = r.epic_id ? (titles.get(r.epic_id) ?? r.epic_id) : null;
    // The step leads the description: at a narrow width the iteration is what is cut.
    const describe = (now: Date): Live => {
      if (running) {
        const t = since(r.started_at, now);
        return { text: [step, `running ${t.text}`, iteration].filter(Boolean).join(' · '), nextMs: t.nextMs };
      }
      const t = ago(r.ended_at ?? r.started_at, now);
      return { text: [step, outcome, t.text].filter(Boolean).join(' · '), nextMs: t.nextMs };
    };
    const argv = commandArgv(r.command);
    return {
      id: `run:${r.id}`,
      kind: 'run',
      label: [role, epicTitle].filter(Boolean).join(' · '),
      description: describe(s.now).text,
      live: describe,
      icon: running
        ? { id: roleSpec(r.role)?.runningIcon ?? 'terminal', color: 'charts.blue' }
        : {
            id: ok ? 'pass' : r.status === 'timed_out' ? 'watch' : 'error',
            color: ok ? 'testing.iconPassed' : 'charts.red',
          },
      contextValue: `run:${r.status}`,
      collapsible: 'none',
      ref: {
        runId: r.id,
        epicId: r.epic_id ?? undefined,
        planPath: r.plan_path ?? undefined,
        anchor: r.step_anchor ?? undefined,
      },
      tooltip: () =>
        [
          `**${md(role)}**${epicTitle ? ` on ${md(epicTitle)} (${md(r.epic_id ?? '')})` : ''}${step ? ` · ${md(step)}` : ''}`,
          // A code span shows its text as it is: nothing in it is escaped, only backticks are kept out.
          argv.length ? `Command: \`${shortCommand(argv).replace(/`/g, "'")}\`` : '',
          `In ${md(r.worktree ? baseName(r.worktree) : 'an unknown worktree')}${iteration ? ` · ${roleSpec(r.role)?.rule === 'planning' ? 'plan ' : 'build '}${iteration}` : ''} · started ${ago(r.started_at, new Date()).text}${r.ended_at ? ` · ended ${ago(r.ended_at, new Date()).text}` : ''}`,
          running ? '' : `**${outcome}**${r.outcome_reason ? ` — ${md(r.outcome_reason)}` : ''}`,
          tail && !ok ? '```\n' + tail + '\n```' : '',
        ]
          .filter(Boolean)
          .join('\n\n'),
    };
  });
}

/**
 * "iteration 2/20": the build iteration a Ralph or Bart run belongs to against the epic's budget; for
 * Lisa the plan iteration her run writes (her first run writes plan 1) against the planning budget.
 */
function iterationText(r: RunView, epic: EpicRow | undefined): string {
  const spec = roleSpec(r.role);
  if (!epic || spec?.kind === 'scheduler') return '';
  if (spec?.rule === 'planning')
    return `iteration ${r.iteration + 1}/${COMPLEXITY_POLICY[epic.complexity].planIterations}`;
  return `iteration ${r.iteration}/${buildBudget(epic)}`;
}
