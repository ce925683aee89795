/** Small text helpers shared by the views; no vscode, so they are tested in plain Node. */
import { agoText, shortDuration } from '../../shared/format.ts';
import { PERSON_ROLE, ROLE_NAMES as NAMES } from '../../shared/roles.ts';

export { folderName as baseName, holderName } from '../../core/names.ts';
export { progressBar, shortDuration } from '../../shared/format.ts';

/** A text that changes with the clock, and how long until it next changes (for a cheap timer). */
export interface Live {
  readonly text: string;
  readonly nextMs: number;
}

/** The unit shortDuration shows `ms` in. */
function unitOf(ms: number): number {
  return ms < 60_000 ? 1000 : ms < 48 * 3600_000 ? 60_000 : 3600_000;
}

/** A span that grows with time ("12m ago", "running 3m"): the next change is at the next unit boundary. */
export function since(iso: string, now: Date): Live {
  const ms = Math.max(0, now.getTime() - Date.parse(iso));
  const unit = unitOf(ms);
  return { text: shortDuration(ms), nextMs: unit - (ms % unit) };
}

/** "1h45m left", or "lease expired 6m ago" once it has run out. */
export function leaseLeft(expiresAt: string, now: Date): Live {
  const ms = Date.parse(expiresAt) - now.getTime();
  if (ms < 0) {
    const ago = since(expiresAt, now);
    return { text: `lease expired ${ago.text} ago`, nextMs: ago.nextMs };
  }
  // Counting down, the text changes when the shown unit ticks over, and at expiry at the latest.
  const unit = unitOf(ms);
  return { text: `${shortDuration(ms)} left`, nextMs: Math.min((ms % unit) + 1, ms + 1) };
}

/** A tree row's lease, as short as it reads: "1h45m" left, or "expired 6m ago". */
export function leaseShort(expiresAt: string, now: Date): Live {
  const left = leaseLeft(expiresAt, now);
  return { text: left.text.replace(/ left$/, '').replace(/^lease /, ''), nextMs: left.nextMs };
}

/** "5m ago", "just now". */
export function ago(iso: string, now: Date): Live {
  const ms = now.getTime() - Date.parse(iso);
  return { text: agoText(ms), nextMs: ms < 5000 ? Math.max(1, 5000 - ms) : since(iso, now).nextMs };
}

/** "Step 2.1": how a person reads a step, whatever its anchor. */
export function stepName(number: string): string {
  return `Step ${number}`;
}

/** "in progress", "changes requested": a status as a word. */
export function statusWord(status: string): string {
  return STATUS_WORDS[status] ?? status.replace(/_/g, ' ');
}

export const STATUS_WORDS: Readonly<Record<string, string>> = {
  planned: 'planned',
  ready: 'ready',
  in_progress: 'in progress',
  implemented: 'implemented',
  verified: 'verified',
  done: 'done',
  deferred: 'deferred',
  blocked: 'blocked',
  pending: 'pending',
  claimed: 'claimed',
  completed: 'completed',
  open: 'open',
  proposed: 'proposed',
  approved: 'approved',
  changes_requested: 'changes requested',
  discarded: 'discarded',
  awaiting_person: 'waiting for you',
  decided: 'decided',
  applied: 'applied',
  running: 'running',
  active: 'active',
};

export const SIGNAL_WORDS: Readonly<Record<string, string>> = {
  pass: 'pass',
  implementation_failure: 'implementation failure',
  option_viability_failure: 'option viability',
  adr_invalidated: 'ADR invalidated',
};

/** Whether a signal was a person's review (src/core/review: Marge's agent id, or a worktree when no agent id was given). */
export function isPersonReview(createdBy: string | null): boolean {
  return createdBy === PERSON_ROLE || (createdBy?.startsWith('/') ?? false);
}

/** A signal's kind as the views say it: Bart's type, or a person's review in a person's words. */
export function signalWords(sig: { readonly type: string; readonly created_by: string | null }): string {
  if (isPersonReview(sig.created_by)) return sig.type === 'pass' ? 'approved by you' : 'changes requested by you';
  return SIGNAL_WORDS[sig.type] ?? sig.type;
}

/** Role display names (src/shared/roles.ts), looked up by whatever role a row carries. */
export const ROLE_NAMES: Readonly<Record<string, string>> = NAMES;

/** Escapes text for a Markdown tooltip. */
export function md(text: string): string {
  return text.replace(/([\\`*_{}[\]()#+\-.!|<>])/g, '\\$1');
}

/** The comment at a signal's location: Bart's words (summary, note, the decision) escaped, as the tree tooltips escape them. */
export function signalCommentBody(
  sig: { type: string; summary: string; status: string; resolution: string | null },
  loc: { note: string | null },
  resolvedBy: string | null,
): string {
  const decided = sig.resolution
    ? `\n\n_Decided: ${md(sig.resolution)}${resolvedBy ? ` by ${md(resolvedBy)}` : ''}._`
    : '';
  // The note for this place leads: the Comments panel shows a comment's first line, so each line's own
  // comment is what it lists there (a review's summary names only its first comment).
  const what = `**${SIGNAL_WORDS[sig.type] ?? md(sig.type)}** — ${md(sig.summary)}`;
  return (
    (loc.note ? `${md(loc.note)}\n\n${what}` : what) +
    (sig.status === 'awaiting_person'
      ? '\n\n_Waiting for your decision: add a note if you like, then Send back to Ralph, Escalate to Lisa or Accept._'
      : decided)
  );
}
