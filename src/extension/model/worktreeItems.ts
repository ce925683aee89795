import type { EpicRow, SpringfieldWorktree } from '../../core/index.ts';

/** What a person can do with a worktree (docs/worktrees.md, "From the editor"). */
export type WorktreeAction = 'openNewWindow' | 'openHere' | 'reveal' | 'sourceControl' | 'runApp' | 'stopApp';

export interface ActionItem {
  readonly label: string;
  readonly description?: string;
  readonly action: WorktreeAction;
}

export interface WorktreeItem {
  readonly label: string;
  readonly description: string;
  readonly detail: string;
  readonly worktree: SpringfieldWorktree;
}

/** Epics being worked on: their worktree goes to the Source Control view while they are. */
const WORKED_ON: ReadonlySet<string> = new Set(['in_progress', 'implemented', 'verified']);

/** The terminal an epic's app runs in: `App · <title>`. */
export function appTerminalName(epic: Pick<EpicRow, 'id' | 'title'>): string {
  return `App · ${epic.title || epic.id}`;
}

/** Why an epic has no worktree to open or run an app in, or null when it has one of its own (`exists` asks the disk). */
export function worktreeProblem(
  epic: Pick<EpicRow, 'id' | 'worktree_path'>,
  mainRoot: string | null,
  exists: (path: string) => boolean,
): string | null {
  const path = epic.worktree_path;
  if (!path || path === mainRoot)
    return `${epic.id} has no worktree of its own yet: it gets one when it is started (Start epic, or the scheduler)`;
  if (!exists(path)) return `${epic.id}'s worktree ${path} is gone (removed after the merge, or by prune)`;
  return null;
}

/** The worktrees to add to the Source Control view: those of epics being worked on, not yet added, that exist. */
export function sourceControlCandidates(
  epics: readonly EpicRow[],
  mainRoot: string | null,
  added: ReadonlySet<string>,
  exists: (path: string) => boolean,
): string[] {
  return epics
    .filter(
      (e) =>
        WORKED_ON.has(e.status) &&
        e.worktree_path !== null &&
        e.worktree_path !== mainRoot &&
        !added.has(e.worktree_path),
    )
    .map((e) => e.worktree_path as string)
    .filter(exists);
}

/** "in progress · clean · ports 20010-20019 · app http://localhost:20010/": the facts of a worktree on one line. */
export function worktreeDescription(w: SpringfieldWorktree): string {
  return [
    ...(w.kind === 'planning' ? ['planning'] : []),
    w.status ? w.status.replace(/_/g, ' ') : 'epic gone',
    w.dirty > 0 ? `${w.dirty} uncommitted` : 'clean',
    ...(w.live_runs > 0 ? [`${w.live_runs} running`] : []),
    ...(w.ports ? [`ports ${w.ports}`] : []),
    ...(w.app ? [`app ${w.app.url ?? `pid ${w.app.pid}`}`] : []),
  ].join(' · ');
}

/** The row of a worktree in Worktrees…: the epic's title, its facts, its path. */
export function worktreeItem(w: SpringfieldWorktree): WorktreeItem {
  const icon = w.app ? '$(globe)' : w.kind === 'planning' ? '$(note)' : '$(repo)';
  const name = w.title ?? `${w.epic_id} (epic gone)`;
  return {
    label: `${icon} ${w.kind === 'planning' ? `Planning: ${name}` : name}`,
    description: worktreeDescription(w),
    detail: `${w.path}${w.prunable ? ` — prunable: ${w.prunable}` : ''}`,
    worktree: w,
  };
}

/** What Reveal is called on each platform, as VS Code's own Explorer names it. */
export function revealLabel(platform: NodeJS.Platform): string {
  if (platform === 'darwin') return 'Reveal in Finder';
  if (platform === 'win32') return 'Reveal in File Explorer';
  return 'Reveal in file manager';
}

/** The actions on one worktree: open it, find it, add it to Source Control, and its app's Run or Stop (epic worktrees only). */
export function worktreeActions(
  w: Pick<SpringfieldWorktree, 'kind' | 'status' | 'app'> | null,
  platform: NodeJS.Platform,
): ActionItem[] {
  const items: ActionItem[] = [
    { label: '$(empty-window) Open in new window', action: 'openNewWindow' },
    { label: '$(window) Open in this window', action: 'openHere' },
    { label: `$(folder-opened) ${revealLabel(platform)}`, action: 'reveal' },
    {
      label: '$(source-control) Add to Source Control',
      description: 'its changes and branch in the Source Control view',
      action: 'sourceControl',
    },
  ];
  if (!w || w.kind !== 'epic' || w.status === null) return items;
  if (w.app)
    items.push({ label: '$(debug-stop) Stop app', description: w.app.url ?? `pid ${w.app.pid}`, action: 'stopApp' });
  else
    items.push({
      label: '$(play) Run app',
      description: 'the "run" commands of config.json, on its ports',
      action: 'runApp',
    });
  return items;
}

/** What a prune did or would do, for a confirmation or a report: a headline and one line per worktree. */
export function pruneSummary(r: {
  readonly dry_run: boolean;
  readonly removed: readonly { path: string; epic_id: string; reason: string; kind: string; branch_deleted: boolean }[];
  readonly kept: readonly { path: string; epic_id: string; reason: string }[];
}): { headline: string; detail: string } {
  const n = r.removed.length;
  const plural = (k: number): string => `${k} worktree${k === 1 ? '' : 's'}`;
  const headline = n === 0 ? 'Nothing to prune.' : r.dry_run ? `Remove ${plural(n)}?` : `Removed ${plural(n)}.`;
  const branch = (w: { kind: string; branch_deleted: boolean }): string =>
    w.kind !== 'epic' ? '' : w.branch_deleted ? '; branch deleted' : '; branch kept';
  const lines = [
    ...(n > 0
      ? [
          r.dry_run ? 'Would go:' : 'Removed:',
          ...r.removed.map((w) => `• ${w.path} (${w.epic_id}: ${w.reason}${branch(w)})`),
        ]
      : []),
    ...(r.kept.length > 0
      ? [...(n > 0 ? [''] : []), 'Stays:', ...r.kept.map((w) => `• ${w.path} (${w.epic_id}: ${w.reason})`)]
      : []),
  ];
  return { headline, detail: lines.join('\n') };
}
