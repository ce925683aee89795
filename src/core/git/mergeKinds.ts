/**
 * The conflicts that resolve themselves (docs/files.md, "Conflicts that resolve themselves"): which
 * files are lockfiles or version manifests, and how one conflicted hunk of a three-way merge is
 * resolved where a rule applies exactly. Pure: the hunks come from `git merge-file --diff3`.
 */
import { basename } from 'node:path';

/** How a file's conflict was resolved without a model or a person. */
export type ResolvedHow = 'additive' | 'version' | 'lockfile' | 'regenerated';

/** The ecosystems' lockfiles and the command that brings each up to its manifest (overridable by `regenerate`). */
export const LOCKFILE_COMMANDS: Readonly<Record<string, readonly string[]>> = {
  'package-lock.json': ['npm', 'install', '--package-lock-only', '--ignore-scripts', '--no-audit', '--no-fund'],
  'npm-shrinkwrap.json': ['npm', 'install', '--package-lock-only', '--ignore-scripts', '--no-audit', '--no-fund'],
  'pnpm-lock.yaml': ['pnpm', 'install', '--lockfile-only', '--ignore-scripts'],
  'yarn.lock': ['yarn', 'install', '--mode', 'update-lockfile'],
  'Cargo.lock': ['cargo', 'update', '--workspace'],
  'poetry.lock': ['poetry', 'lock'],
  'uv.lock': ['uv', 'lock'],
  'go.sum': ['go', 'mod', 'tidy'],
};

/** Manifests whose version field takes the higher of two versions. */
const MANIFESTS = new Set(['package.json', 'Cargo.toml', 'pyproject.toml']);

/** Files named like changelogs: their conflicts are nearly always lines added at the top by both sides. */
const CHANGELOG = /^(CHANGELOG|CHANGES|HISTORY|NEWS)(\.[A-Za-z]+)?$/i;

export function isLockfile(path: string): boolean {
  return Object.hasOwn(LOCKFILE_COMMANDS, basename(path));
}

/** The built-in hotspots: lockfiles, version manifests and changelogs (files-aware scheduling lets them be shared). */
export function isBuiltInMergeable(path: string): boolean {
  const name = basename(path);
  return isLockfile(path) || MANIFESTS.has(name) || CHANGELOG.test(name);
}

/** One conflicted region: what the merge base, our side (the branch rebased onto) and theirs (the commit replayed) have there. */
export interface Hunk {
  readonly base: readonly string[];
  readonly ours: readonly string[];
  readonly theirs: readonly string[];
}

/** The hunk's lines when a rule applies exactly, with the rule; null for a real conflict. */
export function resolveHunk(path: string, hunk: Hunk): { lines: string[]; how: ResolvedHow } | null {
  // Both sides only inserted lines at the same place: both insertions, ours then theirs, none doubled.
  if (hunk.base.length === 0 && hunk.ours.length > 0 && hunk.theirs.length > 0) {
    const lines = bothInsertions(hunk.ours, hunk.theirs);
    if (lines) return { lines, how: 'additive' };
  }
  if (MANIFESTS.has(basename(path))) {
    const line = higherVersionLine(hunk);
    if (line !== null) return { lines: [line], how: 'version' };
  }
  return null;
}

/** A line that says something (a list entry, an import), not only punctuation such as `},` or a blank. */
const substantive = (line: string) => /[\p{L}\p{N}]/u.test(line);

/**
 * Both sides' insertions at one place, ours first, when that is exact: theirs already inside ours (the
 * same lines added by both) is taken once; theirs sharing no entry with ours is appended whole; theirs of
 * one-line entries only (list items, imports, changelog lines) drops the entries ours already added.
 * Anything else (multi-line blocks that partly overlap) is a real conflict: null.
 */
function bothInsertions(ours: readonly string[], theirs: readonly string[]): string[] | null {
  const mine = new Set(ours.filter(substantive));
  const shared = theirs.filter((l) => substantive(l) && mine.has(l));
  if (shared.length === 0) return [...ours, ...theirs];
  if (containsRun(ours, theirs)) return [...ours];
  if (theirs.every(substantive)) return [...ours, ...theirs.filter((l) => !mine.has(l))];
  return null;
}

function containsRun(lines: readonly string[], run: readonly string[]): boolean {
  for (let i = 0; i + run.length <= lines.length; i++) if (run.every((l, j) => lines[i + j] === l)) return true;
  return false;
}

const VERSION_LINE = [/^(\s*"version"\s*:\s*")([^"]+)("\s*,?\s*)$/, /^(\s*version\s*=\s*")([^"]+)("\s*)$/];

/** Each side one version line of the same shape: the line with the higher version; otherwise null. */
function higherVersionLine(hunk: Hunk): string | null {
  if (hunk.ours.length !== 1 || hunk.theirs.length !== 1 || hunk.base.length > 1) return null;
  const [ours, theirs] = [hunk.ours[0] as string, hunk.theirs[0] as string];
  for (const re of VERSION_LINE) {
    const a = re.exec(ours);
    const b = re.exec(theirs);
    if (!a || !b || a[1] !== b[1] || a[3] !== b[3]) continue;
    if (hunk.base.length === 1 && !re.test(hunk.base[0] as string)) return null;
    return compareVersions(a[2] as string, b[2] as string) >= 0 ? ours : theirs;
  }
  return null;
}

/**
 * Orders two versions (semver, Cargo, PEP 440's common forms): numbers compared as numbers, part by
 * part; where the numbers agree, a release is above its pre-release (`1.2.0` > `1.2.0-rc.1`).
 */
export function compareVersions(a: string, b: string): number {
  const split = (v: string) => {
    const m = /^v?(\d+(?:\.\d+)*)(.*)$/.exec(v.trim());
    return m ? { nums: (m[1] as string).split('.').map(Number), rest: m[2] as string } : { nums: [], rest: v };
  };
  const x = split(a);
  const y = split(b);
  for (let i = 0; i < Math.max(x.nums.length, y.nums.length); i++) {
    const d = (x.nums[i] ?? 0) - (y.nums[i] ?? 0);
    if (d !== 0) return d;
  }
  if (x.rest === y.rest) return 0;
  if (x.rest === '') return 1;
  if (y.rest === '') return -1;
  return x.rest < y.rest ? -1 : 1;
}

/** Markers long enough that no line of a real file is taken for one. */
export const MARKER_SIZE = 31;

/**
 * Resolves the output of `git merge-file -p --diff3 --marker-size=MARKER_SIZE` hunk by hunk: the
 * merged text and how each hunk went, or null when any hunk is a real conflict.
 */
export function resolveMerged(path: string, merged: string): { text: string; how: ResolvedHow[] } | null {
  const m = (c: string) => c.repeat(MARKER_SIZE);
  const lines = merged.split('\n');
  const out: string[] = [];
  const how: ResolvedHow[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    if (!line.startsWith(m('<')) || line.charAt(MARKER_SIZE) === '<') {
      out.push(line);
      continue;
    }
    const part: string[][] = [[], [], []];
    let at = 0;
    for (i++; i < lines.length; i++) {
      const l = lines[i] as string;
      if (l.startsWith(m('|')) && at === 0) at = 1;
      else if (l === m('=') && at === 1) at = 2;
      else if (l.startsWith(m('>')) && at === 2) break;
      else (part[at] as string[]).push(l);
    }
    if (i >= lines.length || at !== 2) return null;
    const r = resolveHunk(path, { ours: part[0] as string[], base: part[1] as string[], theirs: part[2] as string[] });
    if (!r) return null;
    out.push(...r.lines);
    how.push(r.how);
  }
  return { text: out.join('\n'), how };
}
