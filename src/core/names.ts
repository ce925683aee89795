/** How people, worktrees and times read to a person, in the CLI's text and in the editor alike. */
import { humanSpan } from '../shared/format.ts';

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
