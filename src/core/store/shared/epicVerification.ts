/** An epic's verification as decide() and `epic finish` read it (docs/state-machine.md). */
import type { VerificationState } from '../../epics/completion.ts';
import { call, type Io, type Op } from './op.ts';
import type { StorePort } from './port.ts';

/** An epic event as the scheduler measures from it. */
export interface Marker {
  readonly id: number;
  readonly at: string;
  readonly action: string;
}

/** The epic's latest events that decide() measures from, in one walk back over its epic-level events. */
export interface Markers {
  /** Last entered in_progress. */
  readonly entered?: Marker;
  /** Last became implemented. */
  readonly implemented?: Marker;
  /** Its plan last approved. */
  readonly approved?: Marker;
  /** A person last acted: a retry, a resume, a plan approval (docs/scheduler-faults.md). */
  readonly reset?: Marker;
}

/** A verification result as the rule reads it. */
export interface VerificationRow {
  readonly run_id: number | null;
  readonly command: string;
  readonly exit_code: number | null;
  readonly verdict: string;
  readonly created_at: string;
}

export interface EpicVerificationPort {
  /** The epic's epic-level events, newest first (read only as far as needed). */
  epicEvents(epicId: string): Io<Iterable<Marker & { readonly to_status: string | null }>>;
  /** The epic's verification results since `since` (every one when null), newest first (read only as far as needed). */
  verificationRows(epicId: string, since: string | null): Io<Iterable<VerificationRow>>;
  /** When the epic's latest build ended: a Ralph run that succeeded or moved the branch (one that failed without a commit changed nothing). */
  lastBuildEnd(epicId: string): Io<string | null>;
}

export function* epicMarkers(port: StorePort, epicId: string): Op<Markers> {
  const m: { -readonly [K in keyof Markers]: Marker } = {};
  for (const { to_status: to, ...e } of yield* call(port.epicEvents(epicId))) {
    if (to === 'in_progress') m.entered ??= e;
    if (to === 'implemented') m.implemented ??= e;
    const approval = e.action === 'plan_approved' || e.action === 'new_plan_approved';
    if (approval) m.approved ??= e;
    if (approval || e.action === 'retry' || e.action === 'resume') m.reset ??= e;
    if (m.entered && m.implemented && m.approved && m.reset) break;
  }
  return m;
}

/** An epic's verification since it last entered in_progress (within its current plan), and the failure that ended the latest. */
export interface EpicVerification extends VerificationState {
  readonly sameFailureStreak: number;
  readonly lastFailure: { readonly command: string; readonly exitCode: number | null } | null;
  /** Any verification recorded within the current plan: verification is in use for this epic. */
  readonly recorded: boolean;
}

/**
 * Reads an epic's verification the way decide() and `epic finish` see it: verification passes since
 * the plan's approval, one batch per pass (rows share run_id; a batch fails on its failing command),
 * the latest since the epic last entered in_progress, and whether a build ended after it.
 */
export function* epicVerification(port: StorePort, epicId: string, markers?: Markers): Op<EpicVerification> {
  const { entered, approved } = markers ?? (yield* epicMarkers(port, epicId));
  const since = entered?.at ?? '';
  // Newest first, and read only until the run of identical failures ends: that is all decide() needs.
  type Batch = { key: string; verdict: string; created_at: string; failure: EpicVerification['lastFailure'] };
  const batches: Batch[] = [];
  const signature = (b: { key: string }) => b.key.slice(b.key.indexOf('|'));
  let streak = 0;
  let streaking = true;
  const settle = (b: Batch): void => {
    if (b.verdict !== 'fail' || signature(b) !== signature(batches[0] as Batch)) streaking = false;
    else streak++;
  };
  let recorded = false;
  for (const r of yield* call(port.verificationRows(epicId, approved?.at ?? null))) {
    recorded = true;
    const batch = batches.at(-1);
    const id = `${r.run_id ?? r.created_at}`;
    const failure = r.verdict === 'fail' ? { command: r.command, exitCode: r.exit_code } : null;
    if (batch && batch.key.startsWith(`${id}|`)) {
      if (failure) Object.assign(batch, { verdict: 'fail', key: `${id}|${r.command}|${r.exit_code}`, failure });
      continue;
    }
    if (batch) {
      settle(batch);
      if (!streaking) break;
    }
    batches.push({
      key: `${id}|${failure ? `${r.command}|${r.exit_code}` : ''}`,
      verdict: r.verdict,
      created_at: r.created_at,
      failure,
    });
  }
  const newest = batches.at(-1);
  if (streaking && newest) settle(newest);
  // Batches come newest first, so only the newest can have been recorded since the epic entered in_progress.
  const last = batches[0] !== undefined && batches[0].created_at >= since ? batches[0] : undefined;
  const lastBuild = yield* call(port.lastBuildEnd(epicId));
  const unverifiedBuild = lastBuild !== null && lastBuild >= since && (!last || lastBuild > last.created_at);
  return {
    lastVerdict: last ? (last.verdict === 'pass' ? 'pass' : 'fail') : null,
    sameFailureStreak: streak,
    unverifiedBuild,
    lastFailure: last?.failure ?? null,
    recorded,
  };
}
