import { UsageError } from '../../core/index.ts';
import { str } from '../args.ts';
import { arg, PLAN_ARG, STEP_ARG, type Command } from '../command.ts';
import { output } from '../output.ts';

export const reopenCommand: Command = {
  name: 'reopen',
  summary: 'take a completed step back to pending (admin: a completion made by mistake); recorded with its reason',
  positionals: [PLAN_ARG, STEP_ARG],
  options: [
    { name: 'reason', type: 'string', placeholder: 'TEXT', description: 'why (required), recorded in the event log' },
  ],
  details: [
    'The completion (holder, token, commit, reason) is cleared and kept in the event log; checklist items keep their state.',
    "A substep goes back under its parent's claim, or, when the parent is completed too, both go back to pending.",
    'Claimed steps that depend on it are reset to pending with their tokens bumped, so their holders are fenced.',
  ].join('\n'),
  async run(ctx) {
    const reason = str(ctx.args, 'reason')?.trim();
    if (!reason) throw new UsageError('missing_option', 'reopen needs --reason TEXT (it is recorded in the event log)');
    const plan = ctx.planKey(arg(ctx, 0));
    const r = await ctx.store('write').reopen(plan, arg(ctx, 1), ctx.actor, reason);
    const lines = [
      `Reopened ${r.steps_reopened.join(' and ')} (${r.status} now${r.previous_commit ? `; was completed by commit ${r.previous_commit}` : ''})`,
    ];
    for (const f of r.dependents_fenced)
      lines.push(
        `  ${f.step_anchor}: claim of ${f.previous_holder ?? 'nobody'} reset (it depends on ${r.step_anchor}); token now ${f.claim_token}`,
      );
    if (r.plan_reopened) lines.push(`  ${r.plan_path} is active again`);
    return output(r, lines.join('\n'));
  },
};
