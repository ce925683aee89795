/**
 * Which merged epics git shows reverted (docs/stats.md, "Terms"): an epic's merge commit is the
 * one its last `merged` event names ("squash-merged as <sha>"), else the newest commit on the branch with
 * its Springfield-Epic trailer; it is reverted when a commit on the branch reverts it, or reverts a merge
 * commit that brought it in (`git revert -m 1`), and that revert was not itself reverted. Pure: the store's
 * events and git's facts in.
 */
import type { RevertFacts } from '../git/reverts.ts';
import type { StatsRows } from '../store/shared/stats.ts';

/** Two names of one commit: equal, or one an abbreviation (≥ 7 hex digits) of the other. */
const same = (a: string, b: string) => a.length >= 7 && b.length >= 7 && (a.startsWith(b) || b.startsWith(a));

/** The newest commit that undoes `commit` for good (a revert not itself reverted), or null. */
function undoneBy(facts: RevertFacts, commit: string, depth = 0): string | null {
  if (depth > 50) return null;
  for (const [reverted, reverting] of facts.reverts)
    if (same(reverted, commit))
      for (const revert of [...reverting].reverse()) if (undoneBy(facts, revert, depth + 1) === null) return revert;
  return null;
}

/** Each merged epic whose merge was reverted → the reverting commit. */
export function revertedEpics(rows: StatsRows, facts: RevertFacts): Map<string, string> {
  const out = new Map<string, string>();
  for (const e of rows.epics) {
    const merged = rows.events.filter((v) => v.epic_id === e.id && v.entity === 'epic' && v.action === 'merged').at(-1);
    if (!merged) continue;
    const named = /squash-merged as ([0-9a-f]{7,40})\b/.exec(merged.reason ?? '')?.[1];
    const commit = named ?? facts.epicCommits.get(e.id);
    if (!commit) continue;
    // `git revert -m 1 <merge>` names the merge commit, not the epic's own commits it brought in.
    const mergedIn = [...facts.mergedBy].filter(([, brought]) => [...brought].some((c) => same(c, commit)));
    const revert = [commit, ...mergedIn.map(([merge]) => merge)].map((c) => undoneBy(facts, c)).find((r) => r);
    if (revert) out.set(e.id, revert);
  }
  return out;
}
