/** How people, worktrees and times read to a person, in the CLI's text and in the editor alike. */
import { humanSpan } from '../shared/format.ts';
import type { ClaimResult } from './store/types.ts';

/** The last segment of a path: a worktree is shown by its folder name, never its full path. */
export function folderName(path: string): string {
  return path.split(/[\\/]/).filter(Boolean).at(-1) ?? path;
}

/** A holder by name: the agent id, else "you" for the asking worktree, else the worktree's folder name. */
export function holderName(worktree: string | null, agent: string | null, self?: string): string {
  if (agent) return agent;
  if (worktree && worktree === self) return 'you';
  return worktree ? folderName(worktree) : 'nobody';
}

/** "taken over from ralph-b, lease expired 6 min ago": what a claim of an expired lease says. */
export function takenOverText(
  previous: { worktree: string | null; agent: string | null; leaseExpiresAt: string | null },
  now: Date,
  self?: string,
): string {
  const who = holderName(previous.worktree, previous.agent, self);
  const expired = previous.leaseExpiresAt
    ? `, lease expired ${humanSpan(now.getTime() - Date.parse(previous.leaseExpiresAt))} ago`
    : ', lease expired';
  return `taken over from ${who}${expired}`;
}

/**
 * What a claim took, the same in the CLI, the editor and the agents' tool: "Claimed step-2: Parse the
 * input (taken over from ralph-b, lease expired 6 min ago)". `step` is the step as the reader names it.
 */
export function claimedText(r: ClaimResult & { claimed: true }, step: string, now: Date, self?: string): string {
  const previous = {
    worktree: r.previous_holder,
    agent: r.previous_agent,
    leaseExpiresAt: r.previous_lease_expires_at,
  };
  const takeover = r.reclaimed_from_expired ? ` (${takenOverText(previous, now, self)})` : '';
  return `Claimed ${step}: ${r.step_title}${takeover}`;
}

/** Why a claim took nothing: "Nothing to claim in plans/a.md: every step is completed." */
export function nothingClaimedText(r: ClaimResult & { claimed: false }): string {
  const why =
    r.reason === 'all_completed'
      ? 'every step is completed'
      : r.reason === 'files_busy'
        ? `every ready step shares files with a step another holder claimed (waiting: ${(r.files_waiting ?? []).map((w) => w.message).join('; ')})`
        : `every open step is claimed or waits for another${details(r)}`;
  return `Nothing to claim in ${r.plan_path}: ${why}.`;
}

function details(r: { claimed_steps: readonly string[]; blocked_steps: readonly string[] }): string {
  const parts = [
    ...(r.claimed_steps.length ? [`claimed: ${r.claimed_steps.join(', ')}`] : []),
    ...(r.blocked_steps.length ? [`waiting on dependencies: ${r.blocked_steps.join(', ')}`] : []),
  ];
  return parts.length ? ` (${parts.join('; ')})` : '';
}
