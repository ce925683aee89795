import type { StepStore } from '../../core/index.ts';
import { int, str } from '../args.ts';
import { type Command } from '../command.ts';
import { output } from '../output.ts';

export const eventsCommand: Command<StepStore> = {
  name: 'events',
  summary: 'show the append-only event log (who did what, from/to, why, when)',
  positionals: [{ name: 'plan', required: false, description: 'only events of this plan' }],
  options: [
    {
      name: 'epic',
      type: 'string',
      placeholder: 'ID',
      description: 'only events of this epic and of its plans and their steps',
    },
    { name: 'step', type: 'string', placeholder: 'ANCHOR', description: 'only events of this step' },
    { name: 'since', type: 'int', placeholder: 'ID', description: 'only events after this event id' },
    { name: 'limit', type: 'int', placeholder: 'N', description: 'at most the last N events (default 1000)', min: 1 },
  ],
  async run(ctx) {
    const plan = ctx.args.positionals[0];
    const events = await ctx.store('read').events({
      planPath: plan !== undefined ? ctx.planKey(plan) : undefined,
      epicId: str(ctx.args, 'epic'),
      stepAnchor: str(ctx.args, 'step'),
      afterId: int(ctx.args, 'since'),
      limit: int(ctx.args, 'limit'),
    });
    const text =
      events.length === 0
        ? 'No events.'
        : events
            .map((e) => {
              const change = e.from_status || e.to_status ? ` ${e.from_status ?? '∅'} → ${e.to_status ?? '∅'}` : '';
              const who = e.agent ? `${e.worktree} (${e.agent})` : (e.worktree ?? 'unknown');
              return `#${e.id} ${e.at} ${e.entity} ${e.action} ${e.step_anchor ?? e.epic_id ?? e.plan_path ?? ''}${change} by ${who}${e.reason ? ` — ${e.reason}` : ''}`;
            })
            .join('\n');
    return output({ events }, text);
  },
};
