/**
 * An epic's app (docs/worktrees.md, "Running an epic's app"): the config's `run` commands started in
 * the epic's worktree by `springfield app`, with its ports. Which app runs is kept in a small file in
 * the worktree's own git folder (`.git/worktrees/<name>/`, local to this clone, never committed;
 * created exclusively, never through a link), so the scheduler and `worktrees prune` stop it with the
 * worktree, `worktrees` shows it, and a second start is refused while one runs.
 */
import { lstatSync, readFileSync, rmSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { RefusedError } from '../errors.ts';
import { endGroup, pidAlive } from '../runs/processGroup.ts';
import { replaceFile } from '../safeFiles.ts';

export interface AppRecord {
  readonly epic_id: string;
  readonly worktree: string;
  /** The `springfield app` process that supervises the commands. */
  readonly pid: number;
  /** The process groups of its commands. */
  readonly groups: readonly number[];
  readonly port: number | null;
  readonly url: string | null;
  readonly started_at: string;
}

/** The worktree's own git folder, from its `.git` file (`gitdir: …`); null for a main worktree or none. */
function worktreeGitDir(worktree: string): string | null {
  try {
    const dotGit = join(worktree, '.git');
    if (!lstatSync(dotGit).isFile()) return null;
    const m = /^gitdir: (.+)$/m.exec(readFileSync(dotGit, 'utf8'));
    if (!m?.[1]) return null;
    const dir = m[1].trim();
    return isAbsolute(dir) ? dir : resolve(worktree, dir);
  } catch {
    return null;
  }
}

/** The address a person opens for an app on `port`. */
export function appUrl(port: number | null): string | null {
  return port === null ? null : `http://localhost:${port}/`;
}

const APP_FILE = 'springfield-app.json';

function fileOf(worktree: string): string | null {
  const dir = worktreeGitDir(worktree);
  return dir === null ? null : join(dir, APP_FILE);
}

/** The worktree's app if its supervisor is alive; a file left by one that died is removed. */
export function runningApp(worktree: string): AppRecord | null {
  const path = fileOf(worktree);
  if (path === null) return null;
  let record: AppRecord;
  try {
    if (!lstatSync(path).isFile()) return null;
    record = JSON.parse(readFileSync(path, 'utf8')) as AppRecord;
  } catch {
    return null;
  }
  if (typeof record.pid === 'number' && pidAlive(record.pid)) return record;
  rmSync(path, { force: true });
  return null;
}

/** The refusal of a second start while the epic's app runs. */
export function appRunning(epicId: string, app: AppRecord): RefusedError {
  return new RefusedError(
    'app_running',
    `${epicId}'s app already runs (pid ${app.pid}${app.url ? `, ${app.url}` : ''}); stop it with: springfield app ${epicId} --stop`,
  );
}

/** Records a started app; refused while another runs for the epic. */
export function recordApp(record: AppRecord): void {
  const path = fileOf(record.worktree);
  if (path === null)
    throw new RefusedError(
      'not_epic_worktree',
      `${record.worktree} is not a worktree Springfield made (no .git file naming its git folder)`,
    );
  const other = runningApp(record.worktree);
  if (other && other.pid !== record.pid) throw appRunning(record.epic_id, other);
  // Replaced in one rename, never removed and written again: a reader (the editor's snapshot) that came
  // between the two saw no app, and nothing told it to look again (docs/worktrees.md, "Running an epic's app").
  replaceFile(path, `${JSON.stringify(record)}\n`, 0o644);
}

/** Forgets the worktree's app if `pid` is the one recorded (its supervisor ending). */
export function forgetApp(worktree: string, pid: number): void {
  const path = fileOf(worktree);
  if (path === null) return;
  try {
    const record = JSON.parse(readFileSync(path, 'utf8')) as AppRecord;
    if (record.pid === pid) rmSync(path, { force: true });
  } catch {
    // nothing recorded
  }
}

/**
 * Stops the worktree's app. Its supervisor first (SIGTERM): it ends its commands itself and exits 0 as
 * "stopped", so the terminal it runs in shows a clean end rather than a command killed by a signal;
 * then whatever is left, each command's process group (TERM, then KILL after the grace). Returns what was stopped.
 */
export async function stopApp(worktree: string, graceMs: number): Promise<AppRecord | null> {
  const app = runningApp(worktree);
  if (!app) return null;
  try {
    process.kill(app.pid, 'SIGTERM');
  } catch {
    // already gone
  }
  // The supervisor gives its commands the grace before killing them, so it may take a little more.
  const deadline = Date.now() + 2 * graceMs + 1000;
  while (pidAlive(app.pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
  for (const group of app.groups) await endGroup(group, graceMs);
  forgetApp(worktree, app.pid);
  return app;
}
