/**
 * Do two sets of repository-relative file globs touch a common file? (docs/files.md, "Overlap")
 * `**` is any number of folders (none too), `*` any characters within one name, `?` one character;
 * everything else is literal. A pattern whose last name has no extension also covers whatever lies
 * below it, since a plan may name a folder as `src/auth`. Dotfiles are matched like any name: when
 * unsure, overlapping is the safe answer.
 * Hand-written rather than `path.matchesGlob`, which matches a path against one glob but cannot say
 * whether two globs meet, skips dotfiles and reads `[…]`, `{…}` and `!` the plan grammar does not have.
 * Pure.
 */

/** `./src//auth/` → `src/auth`: the form patterns are compared in. */
export function normalizeGlob(pattern: string): string {
  return pattern
    .replace(/^(\.\/)+/, '')
    .split('/')
    .filter((s) => s !== '' && s !== '.')
    .join('/');
}

/** True when some file path is matched by both patterns (each also covering everything below it). */
export function globsOverlap(a: string, b: string): boolean {
  return segmentsMeet(withBelow(a), withBelow(b));
}

/**
 * The first pattern of `mine` that overlaps one of `theirs`, named as concretely as the pair allows
 * (a literal path over a glob, the longer of two globs), or null when none do.
 */
export function sharedFile(mine: readonly string[], theirs: readonly string[]): string | null {
  for (const m of mine) {
    for (const t of theirs) if (globsOverlap(m, t)) return moreConcrete(normalizeGlob(m), normalizeGlob(t));
  }
  return null;
}

function moreConcrete(a: string, b: string): string {
  const wild = (s: string) => (s.match(/[*?]/g) ?? []).length;
  if (wild(a) !== wild(b)) return wild(a) < wild(b) ? a : b;
  return b.length > a.length ? b : a;
}

/**
 * The pattern's segments, with a trailing `**` when its last name may be a folder: `src/auth` and
 * `src/*` cover `src/auth/login.ts` too, while a name with an extension (`user.ts`, `*.md`) is a file.
 */
function withBelow(pattern: string): string[] {
  const segments = normalizeGlob(pattern)
    .split('/')
    .filter((s) => s !== '');
  const last = segments.at(-1) ?? '**';
  return last === '**' || /^.+\.[^.]+$/.test(last) ? segments : [...segments, '**'];
}

/** Whether two segment patterns (with `**` segments) share a path: a memoised walk over both. */
function segmentsMeet(a: readonly string[], b: readonly string[]): boolean {
  const memo = new Map<number, boolean>();
  const meet = (i: number, j: number): boolean => {
    const key = i * (b.length + 1) + j;
    const known = memo.get(key);
    if (known !== undefined) return known;
    memo.set(key, false);
    let result: boolean;
    if (i === a.length && j === b.length) result = true;
    else if (a[i] === '**') result = meet(i + 1, j) || (j < b.length && meet(i, j + 1));
    else if (b[j] === '**') result = meet(i, j + 1) || (i < a.length && meet(i + 1, j));
    else if (i < a.length && j < b.length) result = namesMeet(a[i] as string, b[j] as string) && meet(i + 1, j + 1);
    else result = false;
    memo.set(key, result);
    return result;
  };
  return meet(0, 0);
}

/** Whether two name patterns (`*`, `?`, literals) match a common non-empty name. */
function namesMeet(a: string, b: string): boolean {
  const memo = new Map<number, boolean>();
  const meet = (i: number, j: number): boolean => {
    const key = i * (b.length + 1) + j;
    const known = memo.get(key);
    if (known !== undefined) return known;
    memo.set(key, false);
    let result: boolean;
    if (i === a.length && j === b.length) result = true;
    else if (a[i] === '*') result = meet(i + 1, j) || (j < b.length && meet(i, j + 1));
    else if (b[j] === '*') result = meet(i, j + 1) || (i < a.length && meet(i + 1, j));
    else if (i < a.length && j < b.length)
      result = (a[i] === '?' || b[j] === '?' || a[i] === b[j]) && meet(i + 1, j + 1);
    else result = false;
    memo.set(key, result);
    return result;
  };
  return meet(0, 0);
}
