/**
 * A rebase that resolves the conflicts that resolve themselves (docs/files.md, "Conflicts that
 * resolve themselves"): at each stop, every conflicted file is tried in order — both sides only added
 * lines at the same place, a version field, a lockfile (the default branch's, regenerated), a
 * configured generated file (regenerated) — and the rebase goes on only when every file resolved.
 * Anything else is a real conflict: the rebase is aborted, so nothing is left half-rebased.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { globsOverlap } from '../scheduler/fileGlobs.ts';
import { firstLine, gitOutAsync, gitRunAsync } from './exec.ts';
import { isLockfile, LOCKFILE_COMMANDS, MARKER_SIZE, resolveMerged, type ResolvedHow } from './mergeKinds.ts';
import { replaceFile } from '../safeFiles.ts';

/** One file resolved at one stop of the rebase: how, and the commit being replayed there. */
export interface Resolution {
  readonly file: string;
  readonly how: ResolvedHow;
  readonly commit: string;
}

/** A command a file is regenerated with: the config's `regenerate` entry whose glob matches it. */
export interface Regenerate {
  readonly glob: string;
  readonly argv: readonly string[];
}

export interface RebaseOptions {
  /** The config's generated files and lockfile commands (these win over the built-in lockfile commands). */
  readonly regenerate: readonly Regenerate[];
  /** Runs a regeneration command in the worktree (the caller's gate, environment and timeout); null when it passed, else why not. */
  readonly run: (argv: readonly string[]) => Promise<string | null>;
  readonly env: NodeJS.ProcessEnv;
  /** false: every conflict is real (`"mechanicalMerge": false`). */
  readonly mechanical?: boolean;
}

export type RebaseOutcome =
  | { readonly kind: 'done'; readonly resolutions: readonly Resolution[] }
  | {
      readonly kind: 'conflict';
      /** The files no rule resolved (or whose regeneration failed). */
      readonly files: readonly string[];
      /** What stopped it, in one line: git's words or the failed regeneration. */
      readonly said: string;
      /** The commit being replayed when it stopped (hash and subject). */
      readonly commit: string;
      /** Files resolved mechanically before the stop (undone with the abort). */
      readonly resolutions: readonly Resolution[];
    };

/** Rebases the worktree's branch onto `target`, resolving what resolves itself; a real conflict is aborted. */
export async function rebaseResolving(worktree: string, target: string, o: RebaseOptions): Promise<RebaseOutcome> {
  const git = (args: readonly string[]) => gitRunAsync(worktree, ['-c', 'core.editor=true', ...args], o.env);
  const resolutions: Resolution[] = [];
  let r = await git(['rebase', target]);
  // Each stop replays one more commit; a branch has finitely many, and the bound keeps a surprise finite.
  for (let stop = 0; r.status !== 0 && stop < 1000; stop++) {
    const files = (await gitOutAsync(worktree, ['diff', '--name-only', '-z', '--diff-filter=U'], o.env))
      .split('\0')
      .filter(Boolean);
    const commit = await replaying(worktree, o.env);
    const said = gitSaid(r.stderr) || gitSaid(r.stdout) || `exit ${r.status}`;
    const fail = async (left: readonly string[], why: string) => {
      await gitRunAsync(worktree, ['rebase', '--abort'], o.env);
      return { kind: 'conflict' as const, files: left, said: why, commit, resolutions };
    };
    if (files.length === 0) return fail([], said);
    const here: Resolution[] = [];
    const commands = new Map<string, readonly string[]>();
    const real: string[] = [];
    for (const file of files) {
      const r = o.mechanical === false ? null : await resolveFile(worktree, file, o);
      if (r === null) real.push(file);
      else {
        here.push({ file, how: r.how, commit });
        if (r.argv) commands.set(JSON.stringify(r.argv), r.argv);
      }
    }
    if (real.length > 0) return fail(real, said);
    for (const argv of commands.values()) {
      const failed = await o.run(argv);
      if (failed !== null) {
        const regenerated = here.filter((h) => h.how === 'lockfile' || h.how === 'regenerated').map((h) => h.file);
        return fail(regenerated, `regenerating ${regenerated.join(', ')}: ${failed}`);
      }
    }
    await gitOutAsync(worktree, ['add', '--', ...files], o.env);
    resolutions.push(...here);
    r = await git(['rebase', '--continue']);
  }
  if (r.status !== 0) {
    await gitRunAsync(worktree, ['rebase', '--abort'], o.env);
    return {
      kind: 'conflict',
      files: [],
      said: gitSaid(r.stderr) || 'the rebase did not end',
      commit: '',
      resolutions,
    };
  }
  return { kind: 'done', resolutions };
}

/** How one conflicted file resolves, and the command to run after (a lockfile, a generated file); null: a real conflict. */
async function resolveFile(
  worktree: string,
  file: string,
  o: RebaseOptions,
): Promise<{ how: ResolvedHow; argv?: readonly string[] } | null> {
  const stages = new Map<number, string>();
  for (const entry of (await gitOutAsync(worktree, ['ls-files', '-u', '-z', '--', file], o.env)).split('\0')) {
    const m = /^\d+ ([0-9a-f]+) (\d)\t/.exec(entry);
    if (m) stages.set(Number(m[2]), m[1] as string);
  }
  const configured = o.regenerate.find((g) => globsOverlap(file, g.glob));
  const argv = configured?.argv ?? (isLockfile(file) ? LOCKFILE_COMMANDS[file.split('/').at(-1) as string] : undefined);
  if (argv) {
    // The default branch's copy (ours, in a rebase), brought up to date by its command.
    if (!stages.has(2)) return null;
    await gitOutAsync(worktree, ['checkout', '--ours', '--', file], o.env);
    return { how: isLockfile(file) ? 'lockfile' : 'regenerated', argv };
  }
  const [base, ours, theirs] = [stages.get(1), stages.get(2), stages.get(3)];
  if (!base || !ours || !theirs) return null;
  const merged = await mergeFile(worktree, base, ours, theirs, o.env);
  if (merged === null) return null;
  const resolved = resolveMerged(file, merged);
  if (!resolved || resolved.how.length === 0) return null;
  const path = join(worktree, file);
  replaceFile(path, resolved.text, statSync(path).mode & 0o777);
  return { how: resolved.how.includes('version') ? 'version' : 'additive' };
}

/** `git merge-file --diff3` of three blobs: the text with its conflict markers, or null for a binary or a failure. */
async function mergeFile(
  worktree: string,
  base: string,
  ours: string,
  theirs: string,
  env: NodeJS.ProcessEnv,
): Promise<string | null> {
  const dir = mkdtempSync(join(tmpdir(), 'sf-merge-file-'));
  try {
    const paths = await Promise.all(
      Object.entries({ base, ours, theirs }).map(async ([name, blob]) => {
        const path = join(dir, name);
        writeFileSync(path, await gitOutAsync(worktree, ['cat-file', 'blob', blob], env), { mode: 0o600 });
        return path;
      }),
    );
    const [b, x, y] = paths as [string, string, string];
    const r = await gitRunAsync(
      worktree,
      [
        'merge-file',
        '-p',
        '--diff3',
        `--marker-size=${MARKER_SIZE}`,
        '-L',
        'ours',
        '-L',
        'base',
        '-L',
        'theirs',
        x,
        b,
        y,
      ],
      env,
    );
    // 0: clean, a positive count: the conflicts; negative (255) is an error such as a binary file.
    if (r.status < 0 || r.status > 127 || readFileSync(x).includes(0)) return null;
    return r.stdout;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The commit a stopped rebase is replaying: `abc1234 Subject`. */
async function replaying(worktree: string, env: NodeJS.ProcessEnv): Promise<string> {
  const r = await gitRunAsync(worktree, ['log', '-1', '--format=%h %s', 'REBASE_HEAD'], env);
  return r.status === 0 ? r.stdout.trim() : '';
}

/** git redraws its progress with carriage returns: a line's last state is what it says. */
export function gitSaid(text: string): string {
  return firstLine(
    text
      .split('\n')
      .map((l) => l.split('\r').at(-1) ?? '')
      .join('\n'),
  );
}
