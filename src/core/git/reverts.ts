/**
 * What git shows of reverted merges (docs/stats.md, "Terms"), read from the branch `ref`: the
 * commits whose message says "This reverts commit <sha>" (`git revert`'s own words, the sha full or, with
 * `--reference`, abbreviated), the commits carrying a `Springfield-Epic` trailer (a squash merge's, or an
 * epic branch's own), and, for each reverted merge commit (`git revert -m 1`), the commits it brought in.
 */
import { gitRun } from './exec.ts';
import { EPIC_TRAILER } from './trailers.ts';

export interface RevertFacts {
  /** A reverted commit (as the revert names it) → every commit that reverts it, oldest first (revert, reapply, revert again). */
  readonly reverts: ReadonlyMap<string, readonly string[]>;
  /** An epic → the newest commit on `ref` whose Springfield-Epic trailer names it. */
  readonly epicCommits: ReadonlyMap<string, string>;
  /** A reverted merge commit (as the revert names it) → the commits it brought into its first parent's line. */
  readonly mergedBy: ReadonlyMap<string, ReadonlySet<string>>;
}

const RECORD = '\x1e';
const FIELD = '\x1f';

/** The facts of `ref` in `root`, or null when git cannot read it (no repository, no commit yet). */
export function readRevertFacts(root: string, ref: string, env: NodeJS.ProcessEnv): RevertFacts | null {
  const log = (grep: string, body: string) =>
    gitRun(root, ['log', ref, '--reverse', `--grep=${grep}`, `--format=%H${FIELD}${body}${RECORD}`, '--'], env);
  const reverting = log('This reverts commit', '%B');
  const epics = log(`^${EPIC_TRAILER}: `, `%(trailers:key=${EPIC_TRAILER},valueonly,unfold)`);
  if (reverting.status !== 0 || epics.status !== 0) return null;
  const reverts = new Map<string, string[]>();
  for (const [sha, body] of records(reverting.stdout))
    for (const m of body.matchAll(/This reverts commit ([0-9a-f]{7,40})\b/g))
      reverts.set(m[1]!, [...(reverts.get(m[1]!) ?? []), sha]);
  const epicCommits = new Map<string, string>();
  for (const [sha, values] of records(epics.stdout))
    for (const epic of values.split('\n').map((v) => v.trim())) if (epic !== '') epicCommits.set(epic, sha);
  // One git call lists the merges; one more per reverted merge lists what it brought in (reverts are few).
  const merges = gitRun(root, ['rev-list', '--merges', ref, '--'], env);
  if (merges.status !== 0) return null;
  const lines = (out: string) => out.split('\n').filter((l) => l !== '');
  const mergedBy = new Map<string, Set<string>>();
  for (const merge of lines(merges.stdout)) {
    const reverted = [...reverts.keys()].find((r) => merge.startsWith(r));
    if (reverted === undefined) continue;
    const brought = gitRun(root, ['rev-list', `${merge}^1..${merge}`, '--'], env);
    if (brought.status === 0) mergedBy.set(reverted, new Set(lines(brought.stdout)));
  }
  return { reverts, epicCommits, mergedBy };
}

function records(out: string): [string, string][] {
  return out
    .split(RECORD)
    .map((r) => r.replace(/^\n/, ''))
    .filter((r) => r.includes(FIELD))
    .map((r) => [r.slice(0, r.indexOf(FIELD)), r.slice(r.indexOf(FIELD) + 1)]);
}
