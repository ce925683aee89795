import { constants, copyFileSync, existsSync, lstatSync, mkdirSync, realpathSync } from 'node:fs';
import { dirname, isAbsolute, join, sep } from 'node:path';
import { ignoredPaths } from '../git/checkIgnore.ts';
import { firstLine, gitRun } from '../git/exec.ts';
import { runCommand, type VerificationResult } from './verify.ts';
import { messageOf } from '../../shared/errorMessage.ts';

/** The file at the repository root that lists ignored files each new worktree gets a copy of (gitignore syntax). */
export const WORKTREE_INCLUDE = '.worktreeinclude';

export interface SetupOptions {
  readonly mainRoot: string;
  readonly worktree: string;
  readonly commands: readonly (readonly string[])[];
  readonly env: NodeJS.ProcessEnv;
  /** For the whole setup, each command's own limit. */
  readonly timeoutMs: number;
  readonly graceMs: number;
}

export interface SetupOutcome {
  readonly ok: boolean;
  /** The failing command's exit code (0 when every step passed). */
  readonly exitCode: number;
  readonly timedOut: boolean;
  /** What happened, ending with the last lines of the commands' output: stored like a verification's. */
  readonly output: string;
  /** Why it failed, in one line; null when it passed. */
  readonly reason: string | null;
}

/** True when a worktree needs setting up at all: setup commands, or a `.worktreeinclude` at the repository root. */
export function setupWanted(mainRoot: string, commands: readonly (readonly string[])[]): boolean {
  return commands.length > 0 || existsSync(join(mainRoot, WORKTREE_INCLUDE));
}

/**
 * Makes a new worktree ready to work in (docs/scheduler-faults.md): copies the ignored files that
 * `.worktreeinclude` lists from the main worktree, then runs the setup commands (argument arrays,
 * never a shell) one after another, stopping at the first failure. Usable for any new worktree.
 */
export async function setUpWorktree(o: SetupOptions): Promise<SetupOutcome> {
  const lines: string[] = [];
  const copy = copyIncluded(o.mainRoot, o.worktree);
  if (copy.copied.length)
    lines.push(
      `copied ${copy.copied.length} file${copy.copied.length === 1 ? '' : 's'} listed by ${WORKTREE_INCLUDE}: ${copy.copied.slice(0, 10).join(', ')}${copy.copied.length > 10 ? ', …' : ''}`,
    );
  for (const s of copy.skipped) lines.push(`not copied: ${s}`);
  for (const argv of o.commands) {
    const r = await runCommand(argv, o.worktree, o.env, o.timeoutMs, o.graceMs);
    lines.push(`$ ${r.command}  (exit ${r.exit_code ?? '?'}, ${(r.duration_ms / 1000).toFixed(1)} s)`, ...tailLines(r));
    if (r.verdict === 'fail') {
      const timedOut = r.timed_out === true;
      return {
        ok: false,
        exitCode: r.exit_code ?? 1,
        timedOut,
        output: lines.join('\n'),
        reason: `setup command \`${r.command}\` ${timedOut ? 'timed out' : `exited ${r.exit_code ?? '?'}`}`,
      };
    }
  }
  return { ok: true, exitCode: 0, timedOut: false, output: lines.join('\n'), reason: null };
}

/** Runs the archive commands in a worktree about to be removed; the first failure stops them and keeps the worktree. */
export async function archiveWorktree(
  worktree: string,
  commands: readonly (readonly string[])[],
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): Promise<VerificationResult | null> {
  for (const argv of commands) {
    const r = await runCommand(argv, worktree, env, timeoutMs);
    if (r.verdict === 'fail') return r;
  }
  return null;
}

function tailLines(r: VerificationResult): string[] {
  return r.output_tail.trimEnd() === '' ? [] : r.output_tail.trimEnd().split('\n').slice(-30);
}

/**
 * Copies the ignored, untracked files matched by `.worktreeinclude` from the main worktree into
 * `worktree`: regular files only (never a link), only from inside the repository to inside the
 * worktree, never over an existing file (exclusive create), never the state database.
 */
export function copyIncluded(mainRoot: string, worktree: string): { copied: string[]; skipped: string[] } {
  const include = join(mainRoot, WORKTREE_INCLUDE);
  const copied: string[] = [];
  const skipped: string[] = [];
  let stat;
  try {
    stat = lstatSync(include);
  } catch {
    return { copied, skipped };
  }
  if (!stat.isFile()) return { copied, skipped: [`${WORKTREE_INCLUDE} is not a regular file`] };
  const env = process.env;
  const listed = gitRun(mainRoot, ['ls-files', '-z', '--others', '--ignored', `--exclude-from=${include}`], env);
  if (listed.status !== 0)
    return { copied, skipped: [`${WORKTREE_INCLUDE}: git ls-files failed: ${firstLine(listed.stderr)}`] };
  const candidates = listed.stdout
    .split('\0')
    .filter((p) => p !== '' && !p.startsWith('.springfield/') && !p.startsWith('.git/'));
  if (candidates.length === 0) return { copied, skipped };
  // Only files git ignores: a tracked or merely untracked file is not the worktree's to copy.
  let ignored: Set<string>;
  try {
    ignored = new Set(ignoredPaths(mainRoot, candidates, env, { noIndex: true }));
  } catch (err) {
    return { copied, skipped: [`${WORKTREE_INCLUDE}: ${messageOf(err)}`] };
  }
  const mainReal = realpathSync(mainRoot);
  const wtReal = realpathSync(worktree);
  for (const rel of candidates) {
    if (!ignored.has(rel)) continue;
    const why = copyOne(mainReal, wtReal, rel);
    if (why === null) copied.push(rel);
    else skipped.push(`${rel} (${why})`);
  }
  return { copied, skipped };
}

/** Copies one file; returns why it was skipped, or null. */
function copyOne(mainReal: string, wtReal: string, rel: string): string | null {
  if (isAbsolute(rel) || rel.split(/[\\/]/).includes('..')) return 'path leaves the repository';
  const source = join(mainReal, rel);
  let stat;
  try {
    stat = lstatSync(source);
  } catch {
    return 'gone';
  }
  if (!stat.isFile()) return 'not a regular file';
  if (!within(realpathSync(source), mainReal)) return 'resolves outside the repository';
  const target = join(wtReal, rel);
  mkdirSync(dirname(target), { recursive: true });
  if (!within(realpathSync(dirname(target)), wtReal)) return 'its folder in the worktree resolves outside it';
  try {
    copyFileSync(source, target, constants.COPYFILE_EXCL);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EEXIST' ? 'already there' : messageOf(err);
  }
  return null;
}

function within(path: string, root: string): boolean {
  return path === root || path.startsWith(root + sep);
}
