import { flag } from '../args.ts';
import { arg, PLAN_ARG, type Command } from '../command.ts';
import { output } from '../output.ts';

export const initCommand: Command = {
  name: 'init',
  summary: 'parse a plan and record its steps, dependencies and checklist items',
  positionals: [PLAN_ARG],
  options: [{ name: 'force', type: 'boolean', description: 're-initialise from the current file, keeping completed steps and items' }],
  details: 'Idempotent: a plan already initialised is left as it is unless --force is given.',
  async run(ctx) {
    const source = ctx.planSource(arg(ctx, 0));
    const store = ctx.store('create');
    const result = await store.initPlan(source, ctx.actor, { force: flag(ctx.args, 'force') });
    const ignored = ctx.gitignoreAdded;
    const text = result.already_initialized
      ? `${result.plan_path} is already initialised (use --force to re-initialise)`
      : `${result.reinitialized ? 'Re-initialised' : 'Initialised'} ${result.plan_path}: ${result.steps_created} steps, ${result.checklist_items_created} checklist items` +
        (result.reinitialized ? `, ${result.steps_kept_completed} completed steps kept` : '') +
        (ignored ? '\nAdded .springfield/ to .gitignore' : '');
    return output(result, text);
  },
};
