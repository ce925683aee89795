import type { StepStore } from '../../core/index.ts';
import { int } from '../args.ts';
import { arg, LEASE_OPTION, PLAN_ARG, STEP_ARG, TOKEN_OPTION, type Command } from '../command.ts';
import { output, until } from '../output.ts';

export const heartbeatCommand: Command<StepStore> = {
  name: 'heartbeat',
  summary: "renew the lease on a step you hold (a substep renews its parent's)",
  positionals: [PLAN_ARG, STEP_ARG],
  options: [LEASE_OPTION, TOKEN_OPTION],
  async run(ctx) {
    const r = await ctx
      .store('write')
      .heartbeat(ctx.planKey(arg(ctx, 0)), arg(ctx, 1), ctx.actor, { leaseSeconds: int(ctx.args, 'lease') });
    return output(r, `Renewed ${r.step_anchor}: lease ${until(r.lease_expires_at, new Date())}`);
  },
};
