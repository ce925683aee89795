import { resolve } from 'node:path';
import { commitStep, UsageError } from '../../core/index.ts';
import { flag, str } from '../args.ts';
import { TOKEN_OPTION, type Command } from '../command.ts';
import type { CliContext } from '../cliContext.ts';
import { output } from '../output.ts';
import { planningStore } from '../planning.ts';

export const commitCommand: Command = {
  name: 'commit',
  summary: 'commit the worktree (git add -A) with Springfield-Step/-Plan/-Epic trailers, then complete the step',
  positionals: [],
  options: [
    {
      name: 'message',
      alias: 'm',
      type: 'string',
      placeholder: 'MSG',
      description: 'the commit message, also -m MSG; the trailers are appended to it',
    },
    {
      name: 'step',
      type: 'string',
      placeholder: 'ANCHOR',
      description: 'the step (default: env SPRINGFIELD_STEP, else the one top-level step this worktree holds)',
    },
    {
      name: 'plan',
      type: 'string',
      placeholder: 'PATH',
      description: "the plan file (default: env SPRINGFIELD_PLAN, repository-relative, else the step's plan)",
    },
    { name: 'no-add', type: 'boolean', description: 'commit only what is already staged (skip git add -A)' },
    {
      name: 'force',
      type: 'string',
      placeholder: 'REASON',
      description: 'complete despite open items/substeps; the reason is recorded',
    },
    TOKEN_OPTION,
  ],
  details: [
    'Everything complete would refuse (not the holder, stale token, plan drift, open items) is refused before git runs.',
    "If the state update fails after a good commit, exit 0 with state_update_failed: true; 'springfield reconcile' repairs it.",
  ].join('\n'),
  async run(ctx) {
    const message = str(ctx.args, 'message');
    if (message === undefined)
      throw new UsageError('missing_option', "commit needs -m MESSAGE (see 'springfield commit --help')");
    if (message.trim() === '') throw new UsageError('missing_value', '-m needs a non-empty message');
    const force = str(ctx.args, 'force');
    if (force !== undefined && force.trim() === '') throw new UsageError('missing_value', '--force needs a reason');
    const actor = ctx.actor;
    const step = str(ctx.args, 'step') ?? (ctx.env.SPRINGFIELD_STEP || undefined);
    const store = planningStore(ctx, 'write');
    const target = await store.commitTarget({
      step,
      planPath: planKey(ctx),
      worktree: actor.worktree,
      agent: actor.agent,
    });
    const source = ctx.planSource(resolve(ctx.location.worktreeRoot ?? ctx.cwd, target.planPath));
    const r = await commitStep({
      store,
      source,
      anchor: target.anchor,
      actor,
      message,
      cwd: actor.worktree,
      env: ctx.env,
      add: !flag(ctx.args, 'no-add'),
      forceReason: force?.trim() ?? null,
    });
    const short = r.commit_hash.slice(0, 12);
    if (r.state_update_failed) {
      const warning =
        `committed ${short} but completing ${r.step_anchor} failed (${r.state_error.message}); ` +
        `retry with 'springfield complete ${r.plan_path} ${r.step_anchor} --commit ${r.commit_hash}' or run 'springfield reconcile'`;
      return output(
        r,
        `Committed ${short} (${r.plan_path} ${r.step_anchor}) — the state update FAILED: ${r.state_error.message}`,
        0,
        [warning],
      );
    }
    const rest = r.plan_completed
      ? 'the plan is complete'
      : `${r.remaining_steps} step${r.remaining_steps === 1 ? '' : 's'} remaining`;
    return output(
      r,
      `Committed ${short} and completed ${r.step_anchor} of ${r.plan_path}${r.forced ? ` (forced: "${r.force_reason}")` : ''} — ${rest}`,
    );
  },
};

/** --plan (relative to the current directory), else SPRINGFIELD_PLAN (relative to the worktree root). */
function planKey(ctx: CliContext): string | undefined {
  const flagged = str(ctx.args, 'plan');
  if (flagged !== undefined) return ctx.planKey(flagged);
  const env = ctx.env.SPRINGFIELD_PLAN;
  if (!env) return undefined;
  return ctx.planKey(resolve(ctx.location.worktreeRoot ?? ctx.cwd, env));
}
