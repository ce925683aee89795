import type { StepStore } from '../../core/index.ts';
import { str } from '../args.ts';
import { arg, type Command } from '../command.ts';
import { output } from '../output.ts';
import { renderPlan, renderStepTree } from '../render/showText.ts';
import { UsageError } from '../../core/errors.ts';

export const showCommand: Command<StepStore> = {
  name: 'show',
  summary: 'show progress of one plan or all plans, or of one step (text with progress bars, or --json)',
  positionals: [{ name: 'plan', required: false, description: 'plan file (default: every plan)' }],
  options: [
    {
      name: 'step',
      type: 'string',
      placeholder: 'ANCHOR',
      description: 'only this step of the plan, with its substeps (reads only their rows)',
    },
  ],
  details: "With --step, --json prints {plan_path, step}: the step as 'show PLAN' lists it.",
  async run(ctx) {
    const key = ctx.args.positionals.length > 0 ? ctx.planKey(arg(ctx, 0)) : undefined;
    const anchor = str(ctx.args, 'step');
    const now = new Date();
    if (anchor !== undefined) {
      if (key === undefined)
        throw new UsageError(
          'missing_argument',
          "'show --step' needs the plan, e.g. springfield show plans/p.md --step step-2",
        );
      const step = await ctx.store('read').showStep(key, anchor);
      return output({ plan_path: key, step }, renderStepTree(key, step, now));
    }
    const plans = await ctx.store('read').showPlans(key);
    const text =
      plans.length === 0
        ? "No plans yet. Start with 'springfield init <plan.md>'."
        : plans.map((p) => renderPlan(p, now)).join('\n\n');
    return output({ plans }, text);
  },
};
