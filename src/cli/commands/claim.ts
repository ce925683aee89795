import { int } from '../args.ts';
import { arg, LEASE_OPTION, PLAN_ARG, type Command } from '../command.ts';
import { takenOverText } from '../../core/index.ts';
import { output, until } from '../output.ts';

export const claimCommand: Command = {
  name: 'claim',
  summary: 'atomically claim the next ready step (dependencies done, by plan order)',
  positionals: [PLAN_ARG],
  options: [LEASE_OPTION],
  details: 'Nothing ready is not an error: exit 0 with claimed=false and the reason.\nA step whose lease expired is reclaimed (reclaimed_from_expired=true) with a new claim token.',
  async run(ctx) {
    const source = ctx.currentPlanSource(arg(ctx, 0));
    const r = await ctx.store('write').claimNext(source, ctx.actor, { leaseSeconds: int(ctx.args, 'lease') });
    if (!r.claimed) {
      const text = r.reason === 'all_completed'
        ? `All steps of ${r.plan_path} are completed.`
        : `No step is ready in ${r.plan_path}.` + (r.claimed_steps.length ? ` Claimed: ${r.claimed_steps.join(', ')}.` : '') + (r.blocked_steps.length ? ` Waiting on dependencies: ${r.blocked_steps.join(', ')}.` : '');
      return output(r, text);
    }
    const text = [
      `Claimed ${r.step_anchor}: ${r.step_title}${r.reclaimed_from_expired ? ` (${takenOverText({ worktree: r.previous_holder, agent: r.previous_agent, leaseExpiresAt: r.previous_lease_expires_at }, new Date(), ctx.actor.worktree)})` : ''}`,
      `  token ${r.claim_token} · lease ${until(r.lease_expires_at, new Date())} · ${r.remaining_ready} more ready · ${r.total_remaining} remaining`,
      `  next: springfield start ${source.planPath} ${r.step_anchor}`,
    ].join('\n');
    return output(r, text);
  },
};
