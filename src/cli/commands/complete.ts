import { resolveCommit, UsageError, type StepStore } from '../../core/index.ts';
import { str } from '../args.ts';
import { arg, PLAN_ARG, STEP_ARG, TOKEN_OPTION, type Command } from '../command.ts';
import { output } from '../output.ts';

export const completeCommand: Command<StepStore> = {
  name: 'complete',
  summary: 'mark a step you hold completed (strict: every item and substep done)',
  positionals: [PLAN_ARG, STEP_ARG],
  options: [
    {
      name: 'commit',
      type: 'string',
      placeholder: 'HASH',
      description: 'the commit that implements the step (resolved in the worktree by git; its full hash is stored)',
    },
    {
      name: 'force',
      type: 'string',
      placeholder: 'REASON',
      description: 'complete despite open items/substeps; the reason is recorded',
    },
    TOKEN_OPTION,
  ],
  details: [
    'Completes the step with its substeps; a substep can also be completed on its own.',
    'Completing an already-completed step again as the same holder (worktree, agent, token) is a no-op success.',
  ].join('\n'),
  async run(ctx) {
    const force = str(ctx.args, 'force');
    if (force !== undefined && force.trim() === '') throw new UsageError('missing_value', '--force needs a reason');
    const given = str(ctx.args, 'commit');
    const source = ctx.currentPlanSource(arg(ctx, 0));
    const commit = given === undefined ? null : resolveCommit(ctx.worktree, given, ctx.env);
    const r = await ctx
      .store('write')
      .complete(source, arg(ctx, 1), ctx.actor, { commitHash: commit, forceReason: force?.trim() ?? null });
    const text = r.already_completed
      ? `${r.step_anchor} was already completed`
      : `Completed ${r.step_anchor}${r.forced ? ` (forced: "${r.force_reason}", ${r.incomplete_items_auto_completed} items auto-completed)` : ''}` +
        (r.plan_completed
          ? ` — the plan is complete`
          : ` — ${r.remaining_steps} step${r.remaining_steps === 1 ? '' : 's'} remaining`);
    return output(r, text);
  },
};
