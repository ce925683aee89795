/**
 * Which terminal an agent run goes to (docs/editor-scheduler.md, "Agent terminals"): one per epic
 * and role, reused for its next run, named so a tab says whose it is, and at most a few kept. No vscode.
 */

/** Terminals kept open at most; past it, the oldest whose run is over close. */
export const TERMINAL_LIMIT = 8;
const TITLE_CHARS = 24;

/** "Ralph · Add a caching layer": the role and the epic's title, cut to stay readable in a tab. */
export function terminalName(role: string, title: string | undefined): string {
  if (!title) return role;
  const short = title.length > TITLE_CHARS ? `${title.slice(0, TITLE_CHARS - 1).trimEnd()}…` : title;
  return `${role} · ${short}`;
}

/** The terminal a run reuses: its epic's and role's (a run for no epic gets one of its own name). */
export function terminalKey(epicId: string | undefined, role: string, name: string): string {
  return epicId ? `${epicId}|${role}` : `run|${name}`;
}

/** Which terminals to close so that at most `limit` stay: the least recently used first, never one whose run is under way. */
export function toClose<T extends { readonly running: boolean; readonly lastUsed: number }>(
  slots: readonly T[],
  limit = TERMINAL_LIMIT,
): T[] {
  const over = slots.length - limit;
  if (over <= 0) return [];
  return slots
    .filter((s) => !s.running)
    .sort((a, b) => a.lastUsed - b.lastUsed)
    .slice(0, over);
}
