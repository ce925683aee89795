import type { StepStore } from '../../core/index.ts';
import { flag } from '../args.ts';
import { arg, PLAN_ARG, type Command } from '../command.ts';
import { output } from '../output.ts';

export const initCommand: Command<StepStore> = {
  name: 'init',
  summary: 'parse a plan and record its steps, dependencies and checklist items',
  positionals: [PLAN_ARG],
  options: [
    {
      name: 'force',
      type: 'boolean',
      description: 're-initialise from the current file, keeping completed steps and items',
    },
  ],
  details:
    'Idempotent: a plan already initialised with this structure is left as it is. A file whose structure changed since\n(steps, anchors, titles, dependencies, items) is refused with plan_drift (exit 1), naming what changed, unless --force.',
  async run(ctx) {
    const source = ctx.planSource(arg(ctx, 0));
    const store = ctx.store('create');
    const result = await store.initPlan(source, ctx.actor, { force: flag(ctx.args, 'force') });
    const ignored = ctx.gitignoreAdded;
    const text = result.already_initialized
      ? `${result.plan_path} is already initialised with this structure; nothing changed`
      : `${result.reinitialized ? 'Re-initialised' : 'Initialised'} ${result.plan_path}: ${result.steps_created} steps, ${result.checklist_items_created} checklist items` +
        (result.reinitialized ? `, ${result.steps_kept_completed} completed steps kept` : '') +
        (ignored ? '\nAdded .springfield/ to .gitignore' : '');
    return output(result, text);
  },
};
