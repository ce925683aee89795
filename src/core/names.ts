/** How people, worktrees and times read to a person, in the CLI's text and in the editor alike. */

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

/** "just now", "40 s", "6 min", "2 h 5 min", "3 days": a span as a person says it. */
export function humanSpan(ms: number): string {
  const s = Math.round(Math.abs(ms) / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 48) return m % 60 ? `${h} h ${m % 60} min` : `${h} h`;
  return `${Math.floor(h / 24)} days`;
}

/** "taken over from ralph-b, lease expired 6 min ago": what a claim of an expired lease says. */
export function takenOverText(previous: { worktree: string | null; agent: string | null; leaseExpiresAt: string | null }, now: Date, self?: string): string {
  const who = holderName(previous.worktree, previous.agent, self);
  const expired = previous.leaseExpiresAt ? `, lease expired ${humanSpan(now.getTime() - Date.parse(previous.leaseExpiresAt))} ago` : ', lease expired';
  return `taken over from ${who}${expired}`;
}
