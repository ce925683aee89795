/**
 * A person's review of an epic's changes (docs/lifecycle.md, "A person reviews the changes"): line
 * comments on the branch's side of the diff, then Request changes or Approve. It is recorded as a
 * typed review signal through the store's existing calls, under the person's agent id, so the event
 * log tells it from Bart's and Ralph's next context carries every comment at its place.
 */
import { RefusedError, UsageError } from '../errors.ts';
import { fileAtCommit } from '../git/branchDiff.ts';
import type { SignalLocation, SignalResult, TransitionOutcome } from '../store/epicTypes.ts';
import type { Store } from '../store/index.ts';
import type { Actor } from '../store/types.ts';
import { epicChanges, type EpicChanges } from './epicChanges.ts';
import { PERSON_ROLE } from '../../shared/roles.ts';

export type ReviewDecision = 'request_changes' | 'approve';
export const REVIEW_DECISIONS: readonly ReviewDecision[] = ['request_changes', 'approve'];

/** One line comment, on the branch's version of a file it changes. */
export interface ReviewComment {
  /** Repository-relative, forward slashes. */
  readonly file: string;
  readonly line: number;
  readonly endLine: number | null;
  readonly text: string;
}

export interface ReviewRequest {
  readonly epicId: string;
  readonly decision: ReviewDecision;
  readonly comments: readonly ReviewComment[];
  /** The finding in one sentence; made from the comments when not given. */
  readonly summary: string | null;
  /** The person; without an agent id the review is recorded as PERSON_REVIEWER's. */
  readonly actor: Actor;
}

export interface ReviewResult {
  readonly epic_id: string;
  readonly decision: ReviewDecision;
  /** Who the review is recorded as (the actor's agent id). */
  readonly reviewer: string;
  readonly comments: number;
  readonly summary: string;
  readonly signal: SignalResult | null;
  readonly transition: TransitionOutcome | null;
  /** A critical epic's merge approval was recorded too. */
  readonly merge_approved: boolean;
}

/** The agent id a person's review is recorded under when they give none: Marge, the person (src/shared/roles.ts). */
export const PERSON_REVIEWER = PERSON_ROLE;

/** The actor a review is recorded as: the person's own agent id, else PERSON_REVIEWER. */
export function reviewerOf(actor: Actor): Actor {
  return actor.agent ? actor : { ...actor, agent: PERSON_REVIEWER };
}

/**
 * Checks the review against the epic and its branch, then records it: Request changes is an
 * `implementation_failure` signal (implemented or verified → in progress, Ralph next) with one
 * location per comment, its text as the note; Approve is a `pass` signal (implemented → verified) and,
 * for a critical epic, the merge approval. Everything is checked before anything is written.
 */
export async function submitReview(
  store: Store,
  mainRoot: string,
  env: NodeJS.ProcessEnv,
  req: ReviewRequest,
): Promise<ReviewResult> {
  const actor = reviewerOf(req.actor);
  const plan = await planReview(store, mainRoot, env, req);
  const locations: SignalLocation[] = req.comments.map((c) => ({
    file: c.file,
    line: c.line,
    endLine: c.endLine,
    note: c.text.trim(),
  }));
  const base = {
    epic_id: req.epicId,
    decision: req.decision,
    reviewer: actor.agent as string,
    comments: req.comments.length,
    summary: plan.summary,
  };
  if (plan.signal === null) {
    await store.approveMerge(req.epicId, actor);
    return { ...base, signal: null, transition: null, merge_approved: true };
  }
  const signal = await store.recordSignal(req.epicId, plan.signal, plan.summary, locations, actor);
  // After the pass, so a failure here leaves a verified epic waiting for a person's merge approval, never the reverse.
  if (plan.approveMerge) await store.approveMerge(req.epicId, actor);
  return { ...base, signal, transition: signal.transition, merge_approved: plan.approveMerge };
}

interface ReviewPlan {
  /** The signal to record; null: only the merge approval (a verified critical epic). */
  readonly signal: 'implementation_failure' | 'pass' | null;
  readonly approveMerge: boolean;
  readonly summary: string;
}

/** What the review will write, or the one refusal that stops it. Reads only. */
async function planReview(
  store: Store,
  mainRoot: string,
  env: NodeJS.ProcessEnv,
  req: ReviewRequest,
): Promise<ReviewPlan> {
  const given = req.summary?.trim() ?? '';
  if (req.summary !== null && given === '') throw new UsageError('missing_value', 'the review summary is empty');
  if (req.decision === 'request_changes' && req.comments.length === 0 && given === '') {
    throw new UsageError('missing_value', 'request changes needs at least one comment (FILE:LINE:TEXT) or a summary');
  }
  for (const c of req.comments) checkCommentShape(c);
  const epic = await store.getEpic(req.epicId);
  if (epic.status !== 'implemented' && epic.status !== 'verified') {
    throw new RefusedError(
      'not_reviewable',
      `${epic.id} is ${epic.status.replace('_', ' ')}: a person reviews its changes once it is implemented or verified`,
    );
  }
  const busy = (await store.runs({ epicId: epic.id, active: true }))[0];
  if (busy)
    throw new RefusedError(
      'review_busy',
      `${busy.role} is working on ${epic.id} now (run ${busy.id}); review it once that run ends`,
    );
  await checkPlaces(await epicChanges(mainRoot, epic.id, env), req.comments, mainRoot, env);
  const critical = epic.complexity === 'critical';
  if (req.decision === 'request_changes')
    return { signal: 'implementation_failure', approveMerge: false, summary: given || changesSummary(req.comments) };
  const summary =
    given ||
    `Approved in review${req.comments.length ? ` (${req.comments.length} comment${req.comments.length === 1 ? '' : 's'})` : ''}`;
  if (epic.status === 'implemented') return { signal: 'pass', approveMerge: critical, summary };
  // Verified: review already passed; what is left to approve is a critical epic's merge.
  if (!critical)
    throw new RefusedError(
      'not_reviewable',
      `${epic.id} already passed review (verified) and merges next: nothing to approve`,
    );
  if (epic.merge_approved_by)
    throw new RefusedError('not_reviewable', `${epic.id}'s merge is already approved (by ${epic.merge_approved_by})`);
  if (req.comments.length > 0)
    throw new UsageError(
      'bad_option',
      `${epic.id} is verified: approving records its merge approval only; comments go with request changes`,
    );
  return { signal: null, approveMerge: true, summary };
}

function checkCommentShape(c: ReviewComment): void {
  if (c.text.trim() === '') throw new UsageError('missing_value', `${c.file}:${c.line}: the comment is empty`);
  if (c.text.includes('\0') || c.file.includes('\0'))
    throw new UsageError('bad_location', `${c.file}:${c.line}: a comment cannot hold a NUL byte`);
  if (!Number.isSafeInteger(c.line) || c.line < 1)
    throw new UsageError('bad_location', `${c.file}:${c.line}: lines start at 1`);
  if (c.endLine !== null && (!Number.isSafeInteger(c.endLine) || c.endLine < c.line))
    throw new UsageError('bad_location', `${c.file}:${c.line}:${c.endLine}: the end line is before the start line`);
}

/** Every comment is on a file the branch adds or changes, within the lines it has at the branch's tip. */
async function checkPlaces(
  changes: EpicChanges,
  comments: readonly ReviewComment[],
  mainRoot: string,
  env: NodeJS.ProcessEnv,
): Promise<void> {
  const lines = new Map<string, number>();
  for (const c of comments) {
    const file = changes.files.find((f) => f.path === c.file);
    if (!file) {
      const open = changes.files.filter((f) => f.status !== 'D').map((f) => f.path);
      const some = open.length
        ? ` (it changes ${open.slice(0, 5).join(', ')}${open.length > 5 ? ', …' : ''})`
        : ' (it changes no file)';
      throw new UsageError('not_in_changes', `${c.file} is not changed on ${changes.branch}${some}`);
    }
    if (file.status === 'D')
      throw new UsageError(
        'not_in_changes',
        `${c.file} is deleted on ${changes.branch}: comment on a file it adds or changes`,
      );
    if (!lines.has(c.file))
      lines.set(c.file, lineCount((await fileAtCommit(mainRoot, changes.tip, c.file, env)) ?? ''));
    const n = lines.get(c.file) as number;
    const last = c.endLine ?? c.line;
    if (last > n)
      throw new UsageError(
        'bad_location',
        `${c.file}:${last}: the file has ${n} line${n === 1 ? '' : 's'} on ${changes.branch}`,
      );
  }
}

/** Lines of a text as an editor numbers them (a final newline ends the last line, it does not start one). */
export function lineCount(text: string): number {
  if (text === '') return 0;
  const n = text.split('\n').length;
  return text.endsWith('\n') ? n - 1 : n;
}

/** "Changes requested in review: <the first comment's first line> (+2 more)". */
function changesSummary(comments: readonly ReviewComment[]): string {
  const first = (comments[0]?.text.trim().split('\n')[0] ?? '').trim();
  const short = first.length > 100 ? `${first.slice(0, 99)}…` : first;
  return `Changes requested in review: ${short}${comments.length > 1 ? ` (+${comments.length - 1} more)` : ''}`;
}
