import { existsSync } from 'node:fs';
import { type Actor, listWorktrees, planRoots, RefusedError, UsageError } from '../../core/index.ts';
import { flag } from '../args.ts';
import type { Command } from '../command.ts';
import type { CliContext } from '../cliContext.ts';
import { output } from '../output.ts';

export const pruneCommand: Command = {
  name: 'prune',
  summary: 'remove plans whose file is in no worktree (steps, items, deps, artifacts); events are kept',
  positionals: [],
  options: [{ name: 'dry-run', type: 'boolean', description: 'only list what would be removed' }],
  details: 'A plan whose file still exists in the main worktree or in any linked worktree is kept.',
  async run(ctx) {
    const dryRun = flag(ctx.args, 'dry-run');
    const location = ctx.location;
    const roots = planRoots(location.mainRoot, listWorktrees(location.worktreeRoot ?? location.commonDir, ctx.env));
    if (roots.length === 0)
      throw new RefusedError('no_worktrees', 'no worktree to look for plan files in; nothing pruned');
    const actor = maintenanceActor(ctx);
    const store = ctx.store(dryRun || !existsSync(ctx.dbPath) ? 'read' : 'write');
    const r = await store.prunePlans(roots, actor, { dryRun });
    const verb = dryRun ? 'Would prune' : 'Pruned';
    const text =
      r.pruned.length === 0 && r.dangling_rows === 0
        ? 'Nothing to prune: every plan file exists.'
        : [
            `${verb} ${r.pruned.length} plan${r.pruned.length === 1 ? '' : 's'}`,
            ...r.pruned.map((p) => `  ${p}`),
            ...(r.dangling_rows > 0
              ? [`${verb} ${r.dangling_rows} dangling row${r.dangling_rows === 1 ? '' : 's'}`]
              : []),
          ].join('\n');
    return output(r, text);
  },
};

/** The actor recorded on maintenance events; null in a bare repository, which has no worktree. */
export function maintenanceActor(ctx: CliContext): Actor | null {
  try {
    return ctx.actor;
  } catch (err) {
    if (err instanceof UsageError && err.code === 'no_worktree') return null;
    throw err;
  }
}
