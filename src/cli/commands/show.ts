import { arg, type Command } from '../command.ts';
import { output } from '../output.ts';
import { renderPlan } from '../render/showText.ts';

export const showCommand: Command = {
  name: 'show',
  summary: 'show progress of one plan or all plans (text with progress bars, or --json)',
  positionals: [{ name: 'plan', required: false, description: 'plan file (default: every plan)' }],
  options: [],
  async run(ctx) {
    const key = ctx.args.positionals.length > 0 ? ctx.planKey(arg(ctx, 0)) : undefined;
    const plans = await ctx.store('read').showPlans(key);
    const now = new Date();
    const text = plans.length === 0 ? "No plans yet. Start with 'springfield init <plan.md>'." : plans.map((p) => renderPlan(p, now)).join('\n\n');
    return output({ plans }, text);
  },
};
