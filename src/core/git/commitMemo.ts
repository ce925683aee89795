/**
 * Git's answers about commits named by their ids never change, and the scheduler asks some again:
 * the files a branch changed since main (once to predict conflicts, once for files-aware scheduling)
 * and where an epic's branch left main (before each step). The last few hundred answers are kept
 * (docs/files.md, "What it gains"). Only full commit ids are keys: a name such as `main` or `HEAD`
 * moves, so an answer asked by one is never kept.
 */
const COMMIT_ID = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

export class CommitMemo<T> {
  private readonly kept = new Map<string, T>();
  private readonly limit: number;

  constructor(limit = 256) {
    this.limit = limit;
  }

  /** `compute()`'s answer for these commits: kept when every one is a full id and the answer is not null. */
  async get(commits: readonly string[], compute: () => Promise<T | null>): Promise<T | null> {
    const key = commits.every((c) => COMMIT_ID.test(c)) ? commits.join(' ') : null;
    if (key !== null && this.kept.has(key)) return this.kept.get(key) as T;
    const answer = await compute();
    if (key === null || answer === null) return answer;
    // Oldest first out: a Map keeps insertion order.
    if (this.kept.size >= this.limit) this.kept.delete(this.kept.keys().next().value as string);
    this.kept.set(key, answer);
    return answer;
  }
}
