/**
 * Claims and leases (docs/steps.md): the first ready top-level step is claimed with its substeps under
 * a lease and a fencing token; its holder starts it and renews the lease; an admin or the end of its run
 * gives it back. Once for both backends; PostgreSQL also claims in one statement when it can
 * (postgres/claimOne.ts), falling back to this operation to say why it did not.
 */
import type { PlanSource } from '../../plan/types.ts';
import type { Actor, ClaimResult, FilesWait, HeartbeatResult, ResetResult, StartResult } from '../types.ts';
import { filesWait, othersHeld } from './filesClaim.ts';
import { call, type Io, type Op } from './op.ts';
import type { StepPort } from './port.ts';
import * as refuse from './refusals.ts';
import {
  assertHolder,
  leaseUntil,
  requireClaim,
  requireCurrentPlan,
  type EventInput,
  type PlanRow,
  type StepRow,
} from './rows.ts';

/**
 * Where an epic's steps are built (docs/lifecycle.md, "Where work happens"): in the epic's own
 * worktree, on its branch. A claim from any other worktree is refused with where to go instead,
 * unless that worktree is on the epic's branch too (a person may build there by choice). An epic
 * with no worktree yet (made by an older Springfield) sets no place.
 */
export interface EpicPlace {
  readonly id: string;
  readonly worktree_path: string | null;
  readonly branch: string | null;
}

/** Who claims: their worktree and the branch it is on (null when detached or unknown). */
export interface Claimer {
  readonly worktree: string;
  readonly branch?: string | null;
}

const short = (ref: string): string => ref.replace(/^refs\/heads\//, '');

/**
 * Where `claimer`'s claim on a step of `epic`'s plan belongs: where the claimer is, or (`elsewhere`)
 * the epic's own worktree. The store refuses a claim elsewhere (claimElsewhere); the editor makes it
 * for that worktree and offers to open it (src/extension/commands/stepCommands.ts).
 */
export function claimPlace(epic: EpicPlace | null, claimer: Claimer): { worktree: string; elsewhere: boolean } {
  const here = { worktree: claimer.worktree, elsewhere: false };
  if (!epic?.worktree_path || claimer.worktree === epic.worktree_path) return here;
  if (epic.branch && claimer.branch && short(claimer.branch) === short(epic.branch)) return here;
  return { worktree: epic.worktree_path, elsewhere: true };
}

/** Why `claimer` may not claim a step of `epic`'s plan `planPath`, or null when it may. */
export function claimElsewhere(planPath: string, epic: EpicPlace | null, claimer: Claimer): string | null {
  if (!epic || !claimPlace(epic, claimer).elsewhere) return null;
  return refuse.epicElsewhereMessage(
    planPath,
    epic.id,
    epic.worktree_path ?? '',
    epic.branch ? short(epic.branch) : null,
  );
}

export const DEFAULT_LEASE_SECONDS = 7200;

/** A plan's epic as a claim sees it: its status and where it is built. */
export type ClaimedEpic = EpicPlace & { readonly status: string };

export interface ClaimsPort {
  claimedEpic(epicId: string): Io<ClaimedEpic | undefined>;
  /**
   * The first claimable top-level step by step_index: pending without blockers, or holding an expired
   * lease; PostgreSQL locks it (SKIP LOCKED: concurrent claimers get different rows).
   */
  firstReady(planPath: string): Io<StepRow | undefined>;
  /** The top-level step `anchor` if it is claimable as firstReady's are; PostgreSQL locks that row only (SKIP LOCKED). */
  readyStep(planPath: string, anchor: string): Io<StepRow | undefined>;
  /** Claims `step` for `actor` (and this host) with `token` until `until`, if its token is still `step.claim_token` and it is claimable: whether it did. */
  claimStep(step: StepRow, actor: Actor, token: number, until: string): Io<boolean>;
  /** Claims the open substeps of `parent` the same way: their anchors in step order. `source` matched the stored structure. */
  claimSubsteps(source: PlanSource, parent: StepRow, actor: Actor, token: number, until: string): Io<string[]>;
  /** Items of the step and its substeps left in progress go back to open (a claim taken over, or given back). */
  reopenItemsInProgress(planPath: string, anchor: string): Io<void>;
  /**
   * The claim's event, then how many top-level steps are ready and open now: the claim's last call
   * (PostgreSQL sends them with the COMMIT, the claimed row locked until then).
   */
  finishClaim(actor: Actor, event: EventInput, planPath: string): Io<{ ready: number; remaining: number }>;
  /** claimed → in_progress, fenced by holder and token: whether it changed. */
  startStepRow(planPath: string, anchor: string, actor: Actor, token: number): Io<boolean>;
  /** Renews the lease of the claim on `anchor` and its substeps, fenced by holder and token: how many rows. */
  renewLease(planPath: string, anchor: string, actor: Actor, token: number, until: string): Io<number>;
  /** A claimed or started step and its substeps back to pending, the token bumped (fencing the holder), in-progress items open. */
  releaseClaimRows(planPath: string, anchor: string): Io<void>;
  /** A completed step and its substeps back to pending (completion cleared, token bumped), their items open, the plan active again. */
  reopenCompletedRows(planPath: string, anchor: string): Io<void>;
}

/** The epic's status and, when it stops the plan's steps being claimed (they are claimed while it is in progress), why. */
export function epicWait(plan: PlanRow, status: string | null): { status: string | null; message: string | null } {
  if (status === null || status === 'in_progress' || plan.epic_id === null) return { status, message: null };
  return { status, message: refuse.epicWaitMessage(plan.plan_path, plan.epic_id, status) };
}

/**
 * Claims the first ready top-level step (by step_index) with its substeps, or reclaims one whose lease
 * expired: one guarded UPDATE, fenced by the token it bumps. Nothing ready is claimed: false, with why.
 * `anchor`: that step only (the scheduler's choice, docs/files.md), claimed if it is claimable, else nothing.
 */
export function* claimNext(
  port: StepPort,
  source: PlanSource,
  actor: Actor,
  leaseSeconds: number,
  branch: string | null,
  filesRule = true,
  anchor: string | null = null,
): Op<ClaimResult> {
  const plan = source.planPath;
  const row = yield* requireCurrentPlan(port, source);
  const epic = row.epic_id ? ((yield* call(port.claimedEpic(row.epic_id))) ?? null) : null;
  const waiting = epicWait(row, epic?.status ?? null).message;
  if (waiting) throw refuse.epicNotInProgress(waiting);
  const elsewhere = claimElsewhere(plan, epic, { worktree: actor.worktree, branch });
  if (elsewhere) throw refuse.epicElsewhere(elsewhere);
  const first = anchor === null ? yield* call(port.firstReady(plan)) : yield* call(port.readyStep(plan, anchor));
  if (!first) {
    const p = yield* call(port.partitionSteps(plan));
    const allDone = p.completed.length === p.all.length;
    return {
      claimed: false,
      plan_path: plan,
      reason: allDone ? 'all_completed' : 'no_ready_steps',
      all_completed: allDone,
      blocked_steps: p.blocked,
      claimed_steps: p.claimed,
    };
  }
  const free = filesRule ? yield* freeOfFiles(port, plan, first, actor) : { step: first };
  if ('waiting' in free) {
    const p = yield* call(port.partitionSteps(plan));
    return {
      claimed: false,
      plan_path: plan,
      reason: 'files_busy',
      all_completed: false,
      blocked_steps: p.blocked,
      claimed_steps: p.claimed,
      files_waiting: free.waiting,
    };
  }
  const cand = free.step;
  const until = leaseUntil(port.now, leaseSeconds);
  const token = cand.claim_token + 1;
  if (!(yield* call(port.claimStep(cand, actor, token, until)))) throw refuse.claimConflict(cand.anchor);
  const substeps = yield* call(port.claimSubsteps(source, cand, actor, token, until));
  const reclaimed = cand.status !== 'pending';
  if (reclaimed) yield* call(port.reopenItemsInProgress(plan, cand.anchor));
  // A holder on PostgreSQL is also a host: a takeover names the host it took over from.
  const previous = reclaimed
    ? {
        previous_agent: cand.claimed_agent,
        ...(cand.claimed_host !== undefined ? { previous_host: cand.claimed_host } : {}),
      }
    : {};
  const open = yield* call(
    port.finishClaim(
      actor,
      {
        entity: 'step',
        action: reclaimed ? 'reclaim' : 'claim',
        planPath: plan,
        stepAnchor: cand.anchor,
        from: cand.status,
        to: 'claimed',
        reason: reclaimed ? `lease of ${cand.claimed_by} expired at ${cand.lease_expires_at}` : null,
        data: {
          claim_token: token,
          lease_expires_at: until,
          previous_holder: reclaimed ? cand.claimed_by : null,
          ...previous,
          substeps,
        },
      },
      plan,
    ),
  );
  return claimResult(plan, actor, {
    anchor: cand.anchor,
    title: cand.title,
    index: cand.step_index,
    substeps,
    token,
    until,
    ...open,
    taken: reclaimed ? { holder: cand.claimed_by, agent: cand.claimed_agent, lease: cand.lease_expires_at } : null,
  });
}

/**
 * The files rule (shared/filesClaim.ts): the first of the plan's ready steps, from `first`, whose declared
 * files meet none of another holder's claimed steps; or, when every one is held back, why each waits.
 * A first step without files is taken as it is, with nothing read (docs/performance.md).
 */
function* freeOfFiles(
  port: StepPort,
  plan: string,
  first: StepRow,
  actor: Actor,
): Op<{ step: StepRow } | { waiting: FilesWait[] }> {
  if (!first.files) return { step: first };
  yield* call(port.lockFileClaims());
  const held = othersHeld(yield* call(port.heldFiles()), actor, port.host);
  const firstWait = filesWait(first.anchor, first.files, held);
  if (!firstWait) return { step: first };
  const waiting = [firstWait];
  for (const step of yield* call(port.readyCandidates(plan))) {
    if (step.anchor === first.anchor) continue;
    const wait = filesWait(step.anchor, step.files, held);
    if (!wait) return { step };
    waiting.push(wait);
  }
  return { waiting };
}

/** What a claim made, however it was made (this operation; on PostgreSQL also its one statement, or its lost reply looked up). */
export interface MadeClaim {
  readonly anchor: string;
  readonly title: string;
  readonly index: number;
  readonly substeps: readonly string[];
  readonly token: number;
  readonly until: string;
  /** Top-level steps claimable and not completed after the claim. */
  readonly ready: number;
  readonly remaining: number;
  /** The holder whose expired lease it took over, or null for a pending step. */
  readonly taken: {
    readonly holder: string | null;
    readonly agent: string | null;
    readonly lease: string | null;
  } | null;
}

/** A claim's result: one shape on every path that claims. */
export function claimResult(planPath: string, actor: Actor, c: MadeClaim): Extract<ClaimResult, { claimed: true }> {
  return {
    claimed: true,
    plan_path: planPath,
    step_anchor: c.anchor,
    step_title: c.title,
    step_index: c.index,
    substeps: c.substeps,
    claim_token: c.token,
    claimed_by: actor.worktree,
    agent: actor.agent,
    remaining_ready: c.ready,
    total_remaining: c.remaining,
    lease_expires_at: c.until,
    reclaimed_from_expired: c.taken !== null,
    previous_holder: c.taken?.holder ?? null,
    previous_agent: c.taken?.agent ?? null,
    previous_lease_expires_at: c.taken?.lease ?? null,
  };
}

/** Moves a claimed step (or substep) to in_progress; only its holder may. Idempotent. */
export function* startStep(port: StepPort, plan: string, anchor: string, actor: Actor): Op<StartResult> {
  const { step, owner } = yield* requireClaim(port, plan, anchor);
  assertHolder(port.host, owner, actor, 'start');
  if (step.status === 'in_progress')
    return { started: true, step_anchor: anchor, status: 'in_progress', started_at: step.started_at ?? port.now };
  if (step.status !== 'claimed') throw refuse.cannotStart(anchor, step.status);
  if (!(yield* call(port.startStepRow(plan, anchor, actor, owner.claim_token))))
    throw refuse.claimChanged('start', anchor);
  yield* call(
    port.writeEvent(actor, {
      entity: 'step',
      action: 'start',
      planPath: plan,
      stepAnchor: anchor,
      from: 'claimed',
      to: 'in_progress',
      data: { claim_token: owner.claim_token },
    }),
  );
  return { started: true, step_anchor: anchor, status: 'in_progress', started_at: port.now };
}

/** Renews the lease of the holder's claim (a substep renews its parent's). */
export function* heartbeat(
  port: StepPort,
  plan: string,
  anchor: string,
  actor: Actor,
  leaseSeconds: number,
): Op<HeartbeatResult> {
  const { owner } = yield* requireClaim(port, plan, anchor);
  assertHolder(port.host, owner, actor, 'heartbeat');
  const until = leaseUntil(port.now, leaseSeconds);
  if ((yield* call(port.renewLease(plan, owner.anchor, actor, owner.claim_token, until))) < 1)
    throw refuse.claimChanged('heartbeat', anchor);
  yield* call(
    port.writeEvent(actor, {
      entity: 'step',
      action: 'heartbeat',
      planPath: plan,
      stepAnchor: owner.anchor,
      data: { claim_token: owner.claim_token, lease_expires_at: until },
    }),
  );
  return { renewed: true, step_anchor: owner.anchor, claim_token: owner.claim_token, lease_expires_at: until };
}

/** Admin escape hatch: returns a claimed step and its unfinished substeps to pending, fencing the old holder. */
export function* resetStep(
  port: StepPort,
  plan: string,
  requested: string,
  actor: Actor,
  reason: string | null,
): Op<ResetResult> {
  // Substeps go with their parent: resetting one resets the claim that carries it.
  const step = (yield* requireClaim(port, plan, requested)).owner;
  const anchor = step.anchor;
  if (step.status === 'completed') throw refuse.resetCompleted(plan, anchor, step.commit_hash);
  if (step.status !== 'pending') yield* call(port.releaseClaimRows(plan, anchor));
  yield* call(
    port.writeEvent(actor, {
      entity: 'step',
      action: 'reset',
      planPath: plan,
      stepAnchor: anchor,
      from: step.status,
      to: 'pending',
      reason,
      data: { previous_holder: step.claimed_by, claim_token: step.claim_token },
    }),
  );
  return { reset: true, step_anchor: anchor, from_status: step.status, previous_holder: step.claimed_by };
}

/** Who a run held a claim as: host (PostgreSQL; null on SQLite), worktree and token. */
export interface RunHolder {
  readonly host: string | null;
  readonly worktree: string;
  readonly token: number;
}

/**
 * Releases a claim the moment its run ends without finishing the step (docs/scheduler-faults.md):
 * back to pending, fenced by the holder and the token the run held, so a newer claim is never
 * touched. Returns whether it released anything.
 */
export function* releaseClaim(
  port: StepPort,
  plan: string,
  anchor: string,
  holder: RunHolder,
  actor: Actor,
  reason: string,
): Op<boolean> {
  const claim = yield* call(port.findClaim(plan, anchor));
  const step = claim?.step;
  if (
    !step ||
    (step.status !== 'claimed' && step.status !== 'in_progress') ||
    step.claimed_by !== holder.worktree ||
    (step.claimed_host ?? null) !== holder.host ||
    step.claim_token !== holder.token
  )
    return false;
  yield* resetStep(port, plan, anchor, actor, reason);
  return true;
}

/**
 * Reopens a step its run completed with a commit that is not on the epic's branch (the agent
 * committed elsewhere): the step, its substeps and their items go back to pending and open, fenced
 * by the completing token. The commit itself stays reachable where the agent left it.
 */
export function* reopenCompleted(
  port: StepPort,
  plan: string,
  anchor: string,
  token: number,
  actor: Actor,
  reason: string,
): Op<boolean> {
  const step = (yield* call(port.findClaim(plan, anchor)))?.step;
  if (!step || step.status !== 'completed' || step.completed_token !== token) return false;
  yield* call(port.reopenCompletedRows(plan, anchor));
  yield* call(
    port.writeEvent(actor, {
      entity: 'step',
      action: 'reopen',
      planPath: plan,
      stepAnchor: anchor,
      from: 'completed',
      to: 'pending',
      reason,
      data: { commit_hash: step.commit_hash, claim_token: token },
    }),
  );
  return true;
}
