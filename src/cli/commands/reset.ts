import type { StepStore } from '../../core/index.ts';
import { str } from '../args.ts';
import { arg, PLAN_ARG, STEP_ARG, type Command } from '../command.ts';
import { output } from '../output.ts';

export const resetCommand: Command<StepStore> = {
  name: 'reset',
  summary: 'return a claimed step to pending (admin escape hatch; no holder check)',
  positionals: [PLAN_ARG, STEP_ARG],
  options: [{ name: 'reason', type: 'string', placeholder: 'TEXT', description: 'why, recorded in the event log' }],
  details: 'Completed steps are never reset. The old holder is fenced: its claim token stops being current.',
  async run(ctx) {
    const r = await ctx
      .store('write')
      .reset(ctx.planKey(arg(ctx, 0)), arg(ctx, 1), ctx.actor, str(ctx.args, 'reason') ?? null);
    const text =
      r.from_status === 'pending'
        ? `${r.step_anchor} was already pending`
        : `Reset ${r.step_anchor} to pending (was ${r.from_status}${r.previous_holder ? `, held by ${r.previous_holder}` : ''})`;
    return output(r, text);
  },
};
