/**
 * What waits for the person, in one list the tree, the dashboard, the status bar and the badge all
 * show (docs/extension.md, "Needs you"): plans to approve, reviews to decide, blocked epics, leases
 * running out, merges held, plans the person said they would write, roles without an agent, and —
 * while the scheduler runs here with nothing under way — what it waits for. Pure: no vscode.
 */
import {
  COMPLEXITY_POLICY,
  type ConflictAhead,
  type EpicRow,
  isCostBlockReason,
  isRetryable,
  MESSAGES,
  type StepView,
  UNDER_WAY,
  type Unstaffed,
  type Waiting,
} from '../../core/index.ts';
import { ROLE_NAMES, SIGNAL_WORDS, stepName } from '../views/viewText.ts';
import { blockedFact } from './epicFacts.ts';
import type { Snapshot } from './snapshot.ts';
import type { ConflictsAhead } from './conflictWatch.ts';

/** A person's lease this close to its end (or past it) needs them. */
export const LEASE_WARNING_MS = 10 * 60_000;

/** Statuses in which an epic asks nothing of the person. */
const SETTLED: readonly string[] = ['deferred', 'done'];

/** What the scheduler hosted in this window knows after its last pass. */
export interface SchedulerState {
  readonly running: boolean;
  /** Agents or scheduler work it started are under way. */
  readonly busy: boolean;
  readonly waiting: readonly Waiting[];
  readonly unstaffed: readonly Unstaffed[];
  /** How many agents may run at once ("auto: 3 agents at once (at most 20)"); absent while it does not run here. */
  readonly parallel?: string;
}

/** What the person can do about an item; the editor maps each kind to its command. */
export type NeedsYouAction =
  | { readonly kind: 'reviewPlan'; readonly epicId: string }
  | { readonly kind: 'decideSignal'; readonly signalId: number }
  | { readonly kind: 'retry'; readonly epicId: string }
  | { readonly kind: 'renewLease'; readonly planPath: string; readonly anchor: string; readonly worktree: string }
  | { readonly kind: 'openWorktree'; readonly path: string }
  | { readonly kind: 'approveMerge'; readonly epicId: string }
  | { readonly kind: 'openPullRequest'; readonly url: string }
  | { readonly kind: 'writePlan'; readonly epicId: string }
  | { readonly kind: 'proposePlan'; readonly epicId: string }
  | { readonly kind: 'defer'; readonly epicId: string }
  | { readonly kind: 'configureAgents' }
  | { readonly kind: 'openSourceControl' }
  | { readonly kind: 'showEpic'; readonly epicId: string }
  | { readonly kind: 'raiseBudget'; readonly epicId: string }
  | { readonly kind: 'reviewChanges'; readonly epicId: string }
  | { readonly kind: 'openFile'; readonly path: string };

export interface NeedsYouItem {
  /** Stable across refreshes (tree row ids, the dashboard's buttons). */
  readonly key: string;
  readonly epicId: string | null;
  /** What it is about, shortest: the epic's title, or a role. */
  readonly subject: string;
  /** The whole sentence, in plain words. */
  readonly text: string;
  /** The same in a few words, for the epic's own row ("plan awaiting approval"). */
  readonly fact: string;
  /** What the button's words leave out, for the Needs you row ("Ralph failed 3 times in a row"). */
  readonly detail?: string;
  /** The button's words ("Review plan") and what it does. */
  readonly label: string;
  readonly action: NeedsYouAction;
  /** A codicon. */
  readonly icon: string;
  /** For a lease: when it ends, so the row can count down. */
  readonly expiresAt?: string;
}

export interface NeedsYou {
  readonly items: readonly NeedsYouItem[];
  /** While the scheduler runs in this window with nothing under way: what it waits for, in words. */
  readonly idle: string | null;
  /** While it runs here: how many agents may run at once, and why new ones wait for the machine (docs/scheduler.md, "The fleet"). */
  readonly fleet: string | null;
  /**
   * Per epic the scheduler holds back and nothing else is said of: why, in its own words (the
   * person's queue, the machine, a slot, a usage limit, the daily budget), as `epic show` says it.
   */
  readonly held: ReadonlyMap<string, string>;
}

export const NOTHING: NeedsYou = { items: [], idle: null, fleet: null, held: new Map() };

/**
 * Everything that waits for the person now, most urgent first. `ahead`: per epic under way, the
 * conflicts its branch would meet (ConflictWatch: the scheduler's forecast or the editor's own test merges).
 */
export function needsYou(
  s: Snapshot,
  scheduler: SchedulerState | undefined,
  now: Date,
  ahead: ConflictsAhead = new Map(),
): NeedsYou {
  const titleOf = (id: string) => s.epics.find((e) => e.id === id)?.title ?? id;
  const title = (id: string) => `“${titleOf(id)}”`;
  const items: NeedsYouItem[] = [...leaseItems(s, now, title)];
  const about = (epicId: string) => ({ epicId, subject: titleOf(epicId) });
  for (const [epicId, v] of s.awaitingApproval) {
    items.push({
      key: `plan:${epicId}:${v.version}`,
      ...about(epicId),
      icon: 'checklist',
      fact: 'plan awaiting approval',
      label: 'Review plan',
      action: { kind: 'reviewPlan', epicId },
      text: `The plan for ${title(epicId)} waits for your approval (version ${v.version}).`,
    });
  }
  // A deferred or done epic asks no decision: a signal left waiting on it cannot be decided there.
  const open = (id: string) => !SETTLED.includes(s.epics.find((e) => e.id === id)?.status ?? 'done');
  for (const sig of s.signals.filter((x) => x.status === 'awaiting_person' && open(x.epic_id))) {
    items.push({
      key: `signal:${sig.id}`,
      ...about(sig.epic_id),
      icon: 'comment-discussion',
      fact: 'review waits for you',
      label: 'Decide',
      detail: `Bart: ${SIGNAL_WORDS[sig.type] ?? sig.type}`,
      action: { kind: 'decideSignal', signalId: sig.id },
      text: `Bart's review of ${title(sig.epic_id)} waits for your decision: ${SIGNAL_WORDS[sig.type] ?? sig.type} — ${sig.summary}`,
    });
  }
  for (const e of s.epics) items.push(...epicItems(s, e, title(e.id)).map((i) => ({ ...i, ...about(e.id) })));
  for (const e of s.epics) {
    const conflicts = UNDER_WAY.includes(e.status) ? (ahead.get(e.id) ?? []) : [];
    const item = conflicts[0] ? conflictItem(s, e, conflicts, titleOf) : null;
    if (item) items.push({ ...item, ...about(e.id) });
  }
  items.push(...unstaffedItems(scheduler?.unstaffed ?? [], title));
  const covered = new Set(items.map((i) => i.epicId));
  for (const w of scheduler?.waiting ?? []) {
    if (w.kind !== 'person' || covered.has(w.epic_id) || !stillHeld(s, w)) continue;
    covered.add(w.epic_id);
    items.push({ ...waitingItem(w, title(w.epic_id)), ...about(w.epic_id) });
  }
  const queue = scheduler?.waiting.filter((w) => w.kind === 'queue') ?? [];
  if (queue[0]) items.push(queueItem(queue[0], queue.length));
  const limited = scheduler?.waiting.filter((w) => w.kind === 'limit') ?? [];
  if (limited.length > 0 && !scheduler?.busy && !s.runs.some((r) => r.status === 'running'))
    items.push(limitItem(limited, titleOf));
  return {
    items,
    idle: idleText(s, scheduler, items.length, title, now),
    fleet: fleetText(scheduler),
    held: heldFacts(s, scheduler),
  };
}

/** The scheduler's holds an epic's row says (a person's wait, a backoff or files are said elsewhere). */
const HOLDS: readonly Waiting['kind'][] = ['queue', 'machine', 'slot', 'limit', 'budget'];

/**
 * Why the scheduler's last pass held each epic back, while the store still says what it held: an
 * epic with a run under way or settled is not held, and a queue holds only a new epic's planning.
 */
function heldFacts(s: Snapshot, scheduler: SchedulerState | undefined): Map<string, string> {
  const out = new Map<string, string>();
  const running = new Set(s.runs.filter((r) => r.status === 'running').map((r) => r.epic_id));
  for (const w of scheduler?.running ? scheduler.waiting : []) {
    const e = s.epics.find((x) => x.id === w.epic_id);
    if (!e || !HOLDS.includes(w.kind) || out.has(e.id) || running.has(e.id) || SETTLED.includes(e.status)) continue;
    if (w.kind === 'queue' && e.status !== 'planned') continue;
    out.set(e.id, w.message.replace(/^waiting: /, ''));
  }
  return out;
}

/** The person's queue is full (maxWaitingOnPerson): one item for the new epics whose planning waits. */
function queueItem(w: Waiting, held: number): NeedsYouItem {
  const why = w.message.replace(/^no new planning: /, '');
  return {
    key: 'queue',
    epicId: null,
    subject: 'Planning held',
    icon: 'inbox',
    fact: 'planning waits for your queue',
    detail: why,
    label: 'Show epic',
    action: { kind: 'showEpic', epicId: w.epic_id },
    text: `No new epic's planning starts while ${why}: ${held} new epic${held === 1 ? ' waits' : 's wait'}.`,
  };
}

/**
 * Every preset of a role is limited and nothing else runs: one item for all the epics that wait,
 * with the reset ("Nothing can run: claude limited until 14:05 (Lisa)"), offering a fallback.
 */
function limitItem(waits: readonly Waiting[], titleOf: (id: string) => string): NeedsYouItem {
  const reasons = [...new Set(waits.map((w) => w.message.replace(/^waiting: /, '')))];
  const epics = [...new Set(waits.map((w) => w.epic_id))];
  const until = waits
    .map((w) => w.until)
    .filter((u): u is string => u !== null)
    .sort()[0];
  const who = epics.length === 1 ? `“${titleOf(epics[0] as string)}” waits` : `${epics.length} epics wait`;
  return {
    key: `limit:${until ?? 'probe'}`,
    epicId: epics.length === 1 ? (epics[0] ?? null) : null,
    subject: 'Usage limit',
    icon: 'watch',
    fact: reasons[0] ?? 'a usage limit',
    detail: `${who} for the reset`,
    label: 'Configure agents…',
    action: { kind: 'configureAgents' },
    text: `Nothing can run: ${reasons.join('; ')}. ${who} for the reset; a fallback preset would carry on meanwhile.`,
  };
}

/** "3 agents at once (auto, at most 20) · waiting: 0.9 GB free, needs 1 GB" while the scheduler runs here. */
function fleetText(scheduler: SchedulerState | undefined): string | null {
  if (!scheduler?.running || !scheduler.parallel) return null;
  const machine = scheduler.waiting.find((w) => w.kind === 'machine');
  return machine ? `${scheduler.parallel} · ${machine.message}` : scheduler.parallel;
}

/** Steps a person holds whose lease ends within LEASE_WARNING_MS, or has ended. */
function leaseItems(s: Snapshot, now: Date, title: (id: string) => string): NeedsYouItem[] {
  const out: NeedsYouItem[] = [];
  for (const plan of s.plans) {
    const epic = plan.epic_id ? s.epics.find((e) => e.id === plan.epic_id) : undefined;
    for (const st of plan.steps.flatMap((x) => [x, ...x.substeps])) {
      if (!personLease(st) || !st.lease_expires_at || !st.claimed_by) continue;
      const left = Date.parse(st.lease_expires_at) - now.getTime();
      if (left > LEASE_WARNING_MS) continue;
      // A person's claim from this window goes to the epic's worktree (docs/lifecycle.md): renewing it here is theirs to do.
      const theirs = st.claimed_by === s.worktree || st.claimed_by === epic?.worktree_path;
      const where = plan.epic_id
        ? `${stepName(st.number)} of ${title(plan.epic_id)}`
        : `${stepName(st.number)} (${st.title})`;
      out.push({
        key: `lease:${plan.plan_path}#${st.anchor}`,
        epicId: plan.epic_id,
        subject: `${stepName(st.number)} · ${plan.epic_id ? (s.epics.find((e) => e.id === plan.epic_id)?.title ?? plan.title) : plan.title}`,
        icon: 'watch',
        expiresAt: st.lease_expires_at,
        fact: left < 0 ? 'your lease expired' : 'your lease ends soon',
        text:
          left < 0
            ? `Your lease on ${where} has expired: anyone may take the step over. Renew it to keep it.`
            : `Your lease on ${where} ends soon. Renew it to keep the step.`,
        label: theirs ? 'Renew lease' : 'Open worktree',
        action: theirs
          ? { kind: 'renewLease', planPath: plan.plan_path, anchor: st.anchor, worktree: st.claimed_by }
          : { kind: 'openWorktree', path: st.claimed_by },
      });
    }
  }
  return out;
}

function personLease(st: StepView): boolean {
  return (st.status === 'claimed' || st.status === 'in_progress') && st.agent === null;
}

/** What an epic's own state asks of the person: a block to lift, a merge to approve, a plan to write. */
function epicItems(s: Snapshot, e: EpicRow, name: string): Omit<NeedsYouItem, 'subject'>[] {
  const base = { epicId: e.id };
  if (e.status === 'blocked' && isCostBlockReason(e.status_reason)) {
    const spent = (e.status_reason ?? '').replace(/^budget_exhausted: /, '');
    return [
      {
        ...base,
        key: `paused:${e.id}`,
        icon: 'debug-pause',
        fact: `paused: ${spent}`,
        detail: `paused: ${spent}`,
        label: 'Raise budget…',
        action: { kind: 'raiseBudget', epicId: e.id },
        text: `${name} is paused: its budget is spent (${spent}). Raise its budget, then Retry.`,
      },
    ];
  }
  if (isRetryable(e)) {
    const why = blockedFact(e);
    return [
      {
        ...base,
        key: `blocked:${e.id}`,
        icon: 'debug-pause',
        fact: `blocked: ${why}`,
        detail: why,
        label: 'Retry',
        action: { kind: 'retry', epicId: e.id },
        text: `${name} is blocked: ${why}. Fix the cause, then Retry.`,
      },
    ];
  }
  // The config gives this complexity's review to the person: the built epic waits for Review changes
  // (a signal already waiting for them is its own item, Decide).
  const waitingSignal = s.signals.some((x) => x.epic_id === e.id && x.status === 'awaiting_person');
  if (e.status === 'implemented' && s.reviewedByPerson.includes(e.complexity) && !waitingSignal) {
    return [
      {
        ...base,
        key: `review:${e.id}:${e.iteration}`,
        icon: 'git-pull-request',
        fact: 'built: waits for your review',
        label: 'Review changes',
        action: { kind: 'reviewChanges', epicId: e.id },
        text: `${name} is built and waits for your review: Review changes, comment on its lines, then Approve or Request changes.`,
      },
    ];
  }
  if (e.status === 'verified' && e.pr_url) {
    return [
      {
        ...base,
        key: `pr:${e.id}`,
        icon: 'git-pull-request',
        fact: 'pull request open',
        label: 'Open pull request',
        action: { kind: 'openPullRequest', url: e.pr_url },
        text: `${name} is verified and its pull request is open: it is done once merged there.`,
      },
    ];
  }
  if (e.status === 'verified' && COMPLEXITY_POLICY[e.complexity].personApprovalBeforeMerge && !e.merge_approved_by) {
    return [
      {
        ...base,
        key: `merge:${e.id}`,
        icon: 'git-merge',
        fact: 'merge waits for you',
        label: 'Approve merge',
        action: { kind: 'approveMerge', epicId: e.id },
        text: `${name} is verified; it is critical, so its merge waits for your approval.`,
      },
    ];
  }
  if ((e.status !== 'planned' && e.status !== 'blocked') || s.awaitingApproval.has(e.id)) return [];
  if (e.plan_iteration >= COMPLEXITY_POLICY[e.complexity].planIterations) {
    return [
      {
        ...base,
        key: `planBudget:${e.id}`,
        icon: 'warning',
        fact: 'planning budget spent',
        label: 'Defer',
        action: { kind: 'defer', epicId: e.id },
        text: `${name} has used its ${COMPLEXITY_POLICY[e.complexity].planIterations} plan versions without an approved plan: re-scope it, or defer it.`,
      },
    ];
  }
  if (e.planner !== 'person') return [];
  if (s.changesRequested.has(e.id)) {
    return [
      {
        ...base,
        key: `revise:${e.id}`,
        icon: 'edit',
        fact: 'changes requested: revise your plan',
        label: 'Propose plan…',
        action: { kind: 'proposePlan', epicId: e.id },
        text: `Changes were requested to your plan for ${name}: revise it, then propose it again.`,
      },
    ];
  }
  const replan = e.status === 'blocked' ? ` (blocked: ${blockedFact(e)})` : '';
  return [
    {
      ...base,
      key: `write:${e.id}`,
      icon: 'new-file',
      fact: 'waits for your plan',
      label: 'New plan…',
      action: { kind: 'writePlan', epicId: e.id },
      text: `${name} waits for the plan you said you would write${replan}.`,
    },
  ];
}

/**
 * The first conflict an epic's branch would meet: "conflict ahead with Add caching in src/db/user.ts".
 * Opens the file in the epic's worktree, where it would be resolved; without one, shows the epic.
 */
function conflictItem(
  s: Snapshot,
  e: EpicRow,
  conflicts: readonly ConflictAhead[],
  titleOf: (id: string) => string,
): Omit<NeedsYouItem, 'subject'> | null {
  const [first, ...rest] = conflicts;
  const file = first?.files[0];
  if (!first || !file) return null;
  const isEpic = (id: string) => s.epics.some((x) => x.id === id);
  const other = isEpic(first.with) ? titleOf(first.with) : first.with;
  const quoted = (id: string) => (isEpic(id) ? `“${titleOf(id)}”` : id);
  const more = first.files.length > 1 ? ` (+${first.files.length - 1})` : '';
  const also = rest.length > 0 ? `; also with ${rest.map((c) => quoted(c.with)).join(', ')}` : '';
  const worktree = e.worktree_path && e.status !== 'done' ? e.worktree_path : null;
  // Between two epics the first to merge goes in; with the default branch, this epic's rebase meets it.
  const after = isEpic(first.with)
    ? 'Of the two, the one that merges first goes in; the other rebases after.'
    : `Its branch is rebased onto ${first.with} when it merges; that rebase will stop there, for you to resolve in its worktree.`;
  return {
    epicId: e.id,
    key: `conflict:${e.id}:${first.with}:${first.files.join(',')}`,
    icon: 'git-compare',
    // The row is 300 px: the file by its base name there (the whole path is in the text, the tooltip and the card).
    fact: `conflict ahead with ${other} in ${file.split('/').pop() ?? file}${more}`,
    detail: `with ${other} in ${file}${more}`,
    label: worktree ? 'Open file' : 'Show epic',
    action: worktree
      ? { kind: 'openFile', path: `${worktree.replace(/\/$/, '')}/${file}` }
      : { kind: 'showEpic', epicId: e.id },
    text: `“${e.title}” would conflict with ${quoted(first.with)} in ${first.files.join(', ')}${also} (a test merge; nothing touched). ${after}`,
  };
}

/** One item per role that has work and no agent: "No agent plays Ralph: “A” and “B” wait for him." */
function unstaffedItems(unstaffed: readonly Unstaffed[], title: (id: string) => string): NeedsYouItem[] {
  const byRole = new Map<string, string[]>();
  for (const u of unstaffed) byRole.set(u.role, [...(byRole.get(u.role) ?? []), u.epic_id]);
  return [...byRole].map(([role, epics]) => {
    const who = ROLE_NAMES[role] ?? role;
    const names = epics.map(title);
    const list =
      names.length <= 2 ? names.join(' and ') : `${names.slice(0, 2).join(', ')} and ${names.length - 2} more`;
    return {
      key: `unstaffed:${role}`,
      epicId: epics.length === 1 ? (epics[0] ?? null) : null,
      subject: who,
      icon: 'person-add',
      fact: `no agent configured for ${who}`,
      detail: `${epics.length} ${epics.length === 1 ? 'epic waits' : 'epics wait'} for one`,
      label: 'Configure agents…',
      action: { kind: 'configureAgents' },
      text: `No agent is configured for ${who}: ${list} ${epics.length === 1 ? 'waits' : 'wait'} for one.`,
    };
  });
}

/**
 * Whether the store still holds what the scheduler's last pass waited for. Only what the store cannot
 * say is taken from the pass (a merge held by the main worktree's changes, a ready epic without a plan);
 * everything else it waits for (plans, signals, blocks, approvals) is an item of its own, read from the store.
 */
function stillHeld(s: Snapshot, w: Waiting): boolean {
  const status = s.epics.find((e) => e.id === w.epic_id)?.status;
  if (w.message === MESSAGES.noApprovedPlan) return status === 'ready';
  return /main worktree has uncommitted changes/.test(w.message) && status === 'verified';
}

/** The main worktree's uncommitted changes hold a merge (MESSAGES.mainDirty in src/core/scheduler/rules.ts). */
function waitingItem(w: Waiting, name: string): Omit<NeedsYouItem, 'subject'> {
  const dirty = /main worktree has uncommitted changes/.test(w.message);
  return {
    key: `waiting:${w.epic_id}`,
    epicId: w.epic_id,
    icon: dirty ? 'git-commit' : 'person',
    fact: dirty ? 'merge waits: uncommitted changes in the main worktree' : w.message,
    detail: dirty ? 'uncommitted changes hold its merge' : w.message,
    label: dirty ? 'Open Source Control' : 'Show epic',
    action: dirty ? { kind: 'openSourceControl' } : { kind: 'showEpic', epicId: w.epic_id },
    text: `${name}: ${w.message}`,
  };
}

/** "Scheduler idle: …" while it runs here with no agent or scheduler work under way; null otherwise. */
function idleText(
  s: Snapshot,
  scheduler: SchedulerState | undefined,
  count: number,
  title: (id: string) => string,
  now: Date,
): string | null {
  if (!scheduler?.running || scheduler.busy || s.runs.some((r) => r.status === 'running')) return null;
  const backoff = scheduler.waiting.filter((w) => w.kind === 'backoff' && w.until);
  const retries = backoff.map(
    (w) => `${title(w.epic_id)} retries in ${minutes(Date.parse(w.until ?? '') - now.getTime())}`,
  );
  // The daily budget stops every epic at once: the one sentence the scheduler gives for it (docs/budgets.md).
  const daily = scheduler.waiting.find((w) => w.kind === 'budget');
  if (daily) return `Scheduler idle: ${daily.message.replace(/^waiting: /, '')}.`;
  if (count > 0)
    return `Scheduler idle: waiting for you (${count === 1 ? 'the item above' : `the ${count} items above`})${retries.length ? `; ${retries.join(', ')}` : ''}.`;
  if (retries.length) return `Scheduler idle: waiting for a retry — ${retries.join(', ')}.`;
  return 'Scheduler idle: nothing to do — no epic has work for an agent (create an epic, or approve a plan).';
}

function minutes(ms: number): string {
  const m = Math.max(1, Math.ceil(ms / 60_000));
  return m === 1 ? 'a minute' : `${m} minutes`;
}
