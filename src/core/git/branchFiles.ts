/**
 * Which files a branch changed, per Springfield step and in all, since it left another branch: what
 * files-aware scheduling infers a step's files from when its plan names none (docs/files.md).
 * Read-only git plumbing; paths are NUL-separated, so no name is ever quoted or split.
 */
import { CommitMemo } from './commitMemo.ts';
import { gitOutAsync, gitRunAsync } from './exec.ts';
import { refFromFiles } from './head.ts';
import { STEP_TRAILER } from './trailers.ts';

/** What a branch changed since its merge base with `base`. */
export interface BranchFiles {
  /** Every file its commits changed (the three-dot diff against `base`). */
  readonly changed: readonly string[];
  /** Per step anchor, the files its own commits (those with its `Springfield-Step` trailer) touched. */
  readonly bySteps: ReadonlyMap<string, readonly string[]>;
}

/** The branch's files since it left `base` (both commit-ish); null when either cannot be read. */
export async function branchFiles(
  cwd: string,
  base: string,
  branch: string,
  env: NodeJS.ProcessEnv,
): Promise<BranchFiles | null> {
  const format = `--format=%x1e%(trailers:key=${STEP_TRAILER},valueonly,separator=%x1d)`;
  const [changed, log] = await Promise.all([
    changedSince(cwd, base, branch, env),
    gitRunAsync(cwd, ['log', '-z', '--no-renames', '--name-only', format, `${base}..${branch}`, '--'], env),
  ]);
  if (!changed || log.status !== 0) return null;
  return { changed, bySteps: stepFiles(log.stdout) };
}

const changedMemo = new CommitMemo<readonly string[]>();

/** Every file `branch` changed since it left `base` (the three-dot diff); null when either cannot be read. */
export async function changedSince(
  cwd: string,
  base: string,
  branch: string,
  env: NodeJS.ProcessEnv,
): Promise<string[] | null> {
  const files = await changedMemo.get([base, branch], async () => {
    const diff = await gitRunAsync(
      cwd,
      ['diff', '--name-only', '-z', '--no-renames', `${base}...${branch}`, '--'],
      env,
    );
    return diff.status === 0 ? nulList(diff.stdout) : null;
  });
  return files && [...files];
}

/** Parses `log -z --name-only --format=%x1e<steps>`: each record is the step list, a NUL, then its files. */
export function stepFiles(log: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const record of log.split('\x1e')) {
    const cut = record.indexOf('\0');
    if (cut < 0) continue;
    const steps = record
      .slice(0, cut)
      .split('\x1d')
      .map((s) => s.trim())
      .filter((s) => s !== '');
    const files = nulList(record.slice(cut + 1).replace(/^\n/, ''));
    for (const step of steps) {
      const known = out.get(step) ?? [];
      for (const f of files) if (!known.includes(f)) known.push(f);
      out.set(step, known);
    }
  }
  return out;
}

/**
 * The commit each ref points at (null for a ref that does not exist): read from the repository's
 * files when they are plain (the scheduler asks on every pass), else in one git call.
 */
export async function refTips(
  cwd: string,
  refs: readonly string[],
  env: NodeJS.ProcessEnv,
): Promise<Map<string, string | null>> {
  const out = new Map<string, string | null>(refs.map((r) => [r, refFromFiles(cwd, r)]));
  const unread = refs.filter((r) => out.get(r) === null);
  if (unread.length === 0) return out;
  const listed = await gitOutAsync(cwd, ['for-each-ref', '--format=%(refname)%00%(objectname)', ...unread], env);
  for (const line of listed.split('\n')) {
    const [ref, sha] = line.split('\0');
    if (ref && sha && out.has(ref)) out.set(ref, sha);
  }
  return out;
}

function nulList(text: string): string[] {
  return text
    .split('\0')
    .map((s) => s.replace(/^\n/, ''))
    .filter((s) => s !== '');
}
