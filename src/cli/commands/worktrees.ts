import {
  configPathFor,
  loadRoleCommands,
  pruneWorktrees,
  requireAllowed,
  springfieldWorktrees,
  timeoutFor,
  trustTargetFor,
  UsageError,
  type SpringfieldWorktree,
} from '../../core/index.ts';
import { flag, str } from '../args.ts';
import type { Command } from '../command.ts';
import type { CliContext } from '../cliContext.ts';
import { output } from '../output.ts';
import { planningStore, worktreeLocation } from '../planning.ts';
import { maintenanceActor } from './prune.ts';
import { SETUP_ROLE } from '../../shared/roles.ts';

const WORKTREES_OPTION = {
  name: 'worktrees',
  type: 'string',
  placeholder: 'DIR',
  description: 'where epic worktrees go, if not "worktreeRoot" in config.json (default: <repo>.springfield/)',
} as const;

function mainRootOf(ctx: CliContext, command: string): string {
  const mainRoot = ctx.location.mainRoot;
  if (!mainRoot) throw new UsageError('no_worktree', `${command} needs a repository with a main worktree`);
  return mainRoot;
}

export const worktreesCommand: Command = {
  name: 'worktrees',
  summary:
    'list the worktrees Springfield made: epic, branch, path, dirty or not, ahead/behind, disk size, live runs, ports, app',
  positionals: [],
  options: [WORKTREES_OPTION],
  details: [
    'Epic worktrees (springfield/<epic> branches) and planning worktrees, wherever they are. "prunable" says why',
    "'springfield worktrees prune' would remove one: its epic is done, deferred or gone, and no agent runs there.",
  ].join('\n'),
  async run(ctx) {
    const mainRoot = mainRootOf(ctx, 'worktrees');
    const list = await springfieldWorktrees(planningStore(ctx, 'read'), mainRoot, worktreeLocation(ctx));
    const text = list.length === 0 ? 'No worktrees made by Springfield.' : list.map(describe).join('\n');
    return output({ worktrees: list }, text);
  },
};

export const worktreesPrune: Command = {
  name: 'worktrees prune',
  summary:
    'remove the worktrees whose epic is done, deferred or gone (archive commands first; never one with a live run)',
  positionals: [],
  options: [
    { name: 'dry-run', type: 'boolean', description: 'only list what would be removed and what stays' },
    {
      name: 'force',
      type: 'string',
      placeholder: 'REASON',
      description: 'remove worktrees with uncommitted work too, recording why (a live run still keeps one)',
    },
    WORKTREES_OPTION,
  ],
  details: [
    "A done epic's branch is deleted with its worktree (its work is on main); a deferred or gone epic's branch is kept, so",
    'resuming the epic makes the worktree again from it. The "archive" commands in config.json run in each epic worktree',
    'first, and one that fails keeps the worktree. Each removal is an event on the epic.',
  ].join('\n'),
  async run(ctx) {
    const mainRoot = mainRootOf(ctx, 'worktrees prune');
    const dryRun = flag(ctx.args, 'dry-run');
    const force = str(ctx.args, 'force') ?? null;
    if (force !== null && force.trim() === '')
      throw new UsageError('bad_option', '--force needs a reason, e.g. --force "abandoned experiment"');
    const config = loadRoleCommands(configPathFor(ctx.stateFile));
    // The archive commands come from config.json: they run only once you allowed it.
    if (!dryRun && config.archive.length > 0) requireAllowed(trustTargetFor(ctx.location, ctx.stateFile, ctx.env));
    const store = planningStore(ctx, dryRun ? 'read' : 'write');
    const r = await pruneWorktrees(store, mainRoot, dryRun ? null : maintenanceActor(ctx), {
      dryRun,
      force,
      archive: config.archive,
      archiveTimeoutMs: timeoutFor(config, SETUP_ROLE) * 1000,
      location: worktreeLocation(ctx),
      config,
    });
    const verb = dryRun ? 'Would remove' : 'Removed';
    const lines = [
      ...(r.removed.length === 0
        ? ['Nothing to prune.']
        : [`${verb} ${r.removed.length} worktree${r.removed.length === 1 ? '' : 's'}:`]),
      ...r.removed.map(
        (w) =>
          `  ${w.path} (${w.epic_id}: ${w.reason}${w.branch_deleted ? '; branch deleted' : w.kind === 'epic' ? '; branch kept' : ''})`,
      ),
      ...(r.kept.length > 0
        ? [`Kept ${r.kept.length}:`, ...r.kept.map((w) => `  ${w.path} (${w.epic_id}: ${w.reason})`)]
        : []),
    ];
    return output(r, lines.join('\n'));
  },
};

function describe(w: SpringfieldWorktree): string {
  const state = [
    w.kind === 'planning' ? 'planning' : (w.branch ?? 'detached'),
    w.status ?? 'epic gone',
    w.dirty > 0 ? `${w.dirty} uncommitted` : 'clean',
    ...(w.ahead !== null ? [`${w.ahead} ahead, ${w.behind} behind`] : []),
    `${size(w.disk_bytes)}${w.disk_complete ? '' : '+'}`,
    ...(w.live_runs > 0 ? [`${w.live_runs} running`] : []),
    ...(w.ports ? [`ports ${w.ports}`] : []),
    ...(w.app ? [`app at ${w.app.url ?? `pid ${w.app.pid}`}`] : []),
  ].join(' · ');
  const title = w.title ? ` ${w.title}` : '';
  return `${w.epic_id}${title}\n  ${w.path}\n  ${state}${w.prunable ? `\n  prunable: ${w.prunable}` : ''}`;
}

function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = bytes / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}
