import type { StepStore } from '../../core/index.ts';
import { arg, PLAN_ARG, STEP_ARG, TOKEN_OPTION, type Command } from '../command.ts';
import { output } from '../output.ts';

export const startCommand: Command<StepStore> = {
  name: 'start',
  summary: 'mark a claimed step in progress (holder only)',
  positionals: [PLAN_ARG, STEP_ARG],
  options: [TOKEN_OPTION],
  async run(ctx) {
    const r = await ctx.store('write').start(ctx.planKey(arg(ctx, 0)), arg(ctx, 1), ctx.actor);
    return output(r, `${r.step_anchor} is in progress`);
  },
};
