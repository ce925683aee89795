import { arg, PLAN_ARG, type Command } from '../command.ts';
import { output } from '../output.ts';

export const readyCommand: Command = {
  name: 'ready',
  summary: 'list steps ready to claim (read-only)',
  positionals: [PLAN_ARG],
  options: [],
  async run(ctx) {
    const r = await ctx.store('read').ready(ctx.planKey(arg(ctx, 0)));
    const line = (label: string, xs: readonly string[]) => `${label.padEnd(11)}${xs.length ? xs.join(', ') : '—'}`;
    const text = [line('Ready:', r.ready_steps), line('Claimed:', r.claimed_steps), line('Expired:', r.expired_claims), line('Blocked:', r.blocked_steps), line('Completed:', r.completed_steps)].join('\n');
    return output(r, text);
  },
};
