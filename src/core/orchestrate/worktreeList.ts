import { existsSync, lstatSync, readdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { gitOutAsync, gitRunAsync } from '../git/exec.ts';
import { worktreeStatus } from '../git/status.ts';
import { parseWorktreeList } from '../git/worktrees.ts';
import { hostId } from '../git/repositoryId.ts';
import { pidAlive } from '../runs/processGroup.ts';
import type { PortBlock } from '../store/portTypes.ts';
import { runningApp } from './apps.ts';
import type { EpicRow, RunView, Store } from '../store/index.ts';
import { epicWorktreePath } from './epicWorktree.ts';
import { planningEpicOf, planningWorktreePath } from './planningWorktree.ts';

/** One worktree Springfield made, as `springfield worktrees` lists it (docs/worktrees.md). */
export interface SpringfieldWorktree {
  readonly path: string;
  readonly kind: 'epic' | 'planning';
  readonly epic_id: string;
  /** The epic's title and status; null when the epic is gone from the store. */
  readonly title: string | null;
  readonly status: string | null;
  readonly branch: string | null;
  /** Files with uncommitted changes (untracked included, ignored not). */
  readonly dirty: number;
  /** Commits on its branch the base does not have, and the base's commits it lacks. */
  readonly ahead: number | null;
  readonly behind: number | null;
  /** Bytes on disk (the git metadata file excluded); `disk_complete` false when the count stopped at its limit. */
  readonly disk_bytes: number;
  readonly disk_complete: boolean;
  /** Agent runs working there now (their supervisor alive). */
  readonly live_runs: number;
  /** Its block of ports on this host (`first-last`) and the first of them, or null while it has none (docs/worktrees.md, "Ports"). */
  readonly ports: string | null;
  readonly port: number | null;
  /** The epic's app running there (`springfield app`): its supervisor's pid and address; null when none runs. */
  readonly app: { readonly pid: number; readonly url: string | null } | null;
  /** Why prune would remove it, or null when it stays (its epic is still being worked on). */
  readonly prunable: string | null;
}

/** Every worktree Springfield made for this repository: epic and planning worktrees git lists in the worktree folder, and epics' recorded ones. */
export async function springfieldWorktrees(
  store: Store,
  mainRoot: string,
  location?: string,
): Promise<SpringfieldWorktree[]> {
  const env = process.env;
  const listed = parseWorktreeList(await gitOutAsync(mainRoot, ['worktree', 'list', '--porcelain', '-z'], env));
  const epics = await store.listEpics();
  const live = (await store.runs({ active: true, limit: 1000 })).filter((r) => r.pid !== null && pidAlive(r.pid));
  const base = (await gitOutAsync(mainRoot, ['rev-parse', '--abbrev-ref', 'HEAD'], env)).trim();
  const blocks = await store.portBlocks(hostId(env));
  const out: SpringfieldWorktree[] = [];
  const seen = new Set<string>();
  for (const entry of listed) {
    const kind = kindOf(entry.path, epics, mainRoot, location);
    if (!kind || seen.has(entry.path)) continue;
    seen.add(entry.path);
    const epic = epics.find((e) => e.id === kind.epicId) ?? null;
    out.push(
      await describe(
        entry.path,
        kind.kind,
        kind.epicId,
        epic,
        entry.branch,
        base,
        live,
        entry.missing,
        blockOf(blocks, entry.path),
      ),
    );
  }
  return out.sort((a, b) => a.path.localeCompare(b.path));
}

/** The block reserved for the worktree at `path` (git lists real paths; the store has the path it was given). */
function blockOf(blocks: readonly PortBlock[], path: string): PortBlock | null {
  return (
    blocks.find((b) => b.worktree === path || (existsSync(b.worktree) && realpathSync(b.worktree) === path)) ?? null
  );
}

/** Whether `path` is a worktree Springfield made: an epic's recorded one, or one at the place it makes them. */
function kindOf(
  path: string,
  epics: readonly EpicRow[],
  mainRoot: string,
  location?: string,
): { kind: 'epic' | 'planning'; epicId: string } | null {
  const real = (p: string): string => (existsSync(p) ? realpathSync(p) : p);
  const recorded = epics.find((e) => e.worktree_path !== null && real(e.worktree_path) === path);
  if (recorded) return { kind: 'epic', epicId: recorded.id };
  const planning = planningEpicOf(path);
  if (planning && real(planningWorktreePath(mainRoot, planning, location)) === path)
    return { kind: 'planning', epicId: planning };
  const id = /(sf-[0-9a-f]+)$/.exec(path)?.[1];
  if (id && real(epicWorktreePath(mainRoot, id, location)) === path) return { kind: 'epic', epicId: id };
  return null;
}

async function describe(
  path: string,
  kind: 'epic' | 'planning',
  epicId: string,
  epic: EpicRow | null,
  branchRef: string | null,
  base: string,
  live: readonly RunView[],
  missing: boolean,
  block: PortBlock | null,
): Promise<SpringfieldWorktree> {
  const branch = branchRef?.replace(/^refs\/heads\//, '') ?? null;
  const dirty = missing ? 0 : (await worktreeStatus(path, process.env).catch(() => [])).length;
  let ahead: number | null = null;
  let behind: number | null = null;
  if (!missing) {
    const counts = await gitRunAsync(path, ['rev-list', '--left-right', '--count', `${base}...HEAD`], process.env);
    const [b, a] = counts.stdout.trim().split(/\s+/).map(Number);
    if (counts.status === 0 && Number.isFinite(a) && Number.isFinite(b)) [ahead, behind] = [a as number, b as number];
  }
  const disk = missing ? { bytes: 0, complete: true } : diskUsage(path);
  const runs = live.filter((r) => r.worktree === path).length;
  const app = missing ? null : runningApp(path);
  return {
    path,
    kind,
    epic_id: epicId,
    title: epic?.title ?? null,
    status: epic?.status ?? null,
    branch,
    dirty,
    ahead,
    behind,
    disk_bytes: disk.bytes,
    disk_complete: disk.complete,
    live_runs: runs,
    ports: block ? `${block.first}-${block.first + block.count - 1}` : null,
    port: block?.first ?? null,
    app: app ? { pid: app.pid, url: app.url } : null,
    prunable: pruneReason(kind, epic, runs),
  };
}

/** Why a worktree may go: its epic is done, deferred or gone, or it is a planning worktree nobody plans in. Null while its epic is worked on. */
function pruneReason(kind: 'epic' | 'planning', epic: EpicRow | null, liveRuns: number): string | null {
  if (liveRuns > 0) return null;
  if (!epic) return 'its epic is gone from the store';
  if (kind === 'planning') return 'a planning worktree no run uses';
  if (epic.status === 'done') return 'its epic is done';
  if (epic.status === 'deferred') return 'its epic is deferred';
  return null;
}

/** Sums file sizes below `dir` (links not followed), stopping after a bounded number of entries: a worktree with node_modules is big. */
function diskUsage(dir: string, limit = 200_000): { bytes: number; complete: boolean } {
  let bytes = 0;
  let entries = 0;
  const stack = [dir];
  while (stack.length > 0) {
    const current = stack.pop() as string;
    let names: string[];
    try {
      names = readdirSync(current);
    } catch {
      continue;
    }
    for (const name of names) {
      if (++entries > limit) return { bytes, complete: false };
      if (current === dir && name === '.git') continue;
      const full = join(current, name);
      try {
        const st = lstatSync(full);
        if (st.isDirectory()) stack.push(full);
        else bytes += st.size;
      } catch {
        // gone meanwhile
      }
    }
  }
  return { bytes, complete: true };
}
