import { str } from '../args.ts';
import { type Command } from '../command.ts';
import { output } from '../output.ts';
import { renderContext } from '../render/contextText.ts';
import { planningStore } from '../planning.ts';

export const contextCommand: Command = {
  name: 'context',
  summary: 'everything a fresh agent session needs to resume: intent, step, items, signals, next commands',
  positionals: [],
  options: [
    { name: 'epic', type: 'string', placeholder: 'ID', description: 'the epic (default: env SPRINGFIELD_EPIC, else the epic of the step you hold)' },
    { name: 'step', type: 'string', placeholder: 'ANCHOR', description: 'the step (default: env SPRINGFIELD_STEP, else the step this worktree holds)' },
  ],
  details: 'Small, step-specific facts are inlined; stable large documents (PLAN.md, ADRs, the whole plan) are listed by path to read.',
  async run(ctx) {
    const epicId = str(ctx.args, 'epic') ?? (ctx.env.SPRINGFIELD_EPIC || undefined);
    const stepAnchor = str(ctx.args, 'step') ?? (ctx.env.SPRINGFIELD_STEP || undefined);
    const view = await planningStore(ctx, 'read').context({ epicId, stepAnchor, actor: ctx.actor, docsRoot: ctx.location.mainRoot ?? ctx.location.worktreeRoot });
    return output(view, renderContext(view));
  },
};
