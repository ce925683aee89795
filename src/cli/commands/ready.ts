import type { StepStore } from '../../core/index.ts';
import type { Command } from '../command.ts';
import { ONLY_PLAN_ARG, planOrOnly } from '../onlyPlan.ts';
import { output } from '../output.ts';

export const readyCommand: Command<StepStore> = {
  name: 'ready',
  summary:
    'list steps ready to claim (read-only); steps of an epic not in progress, or sharing files with a step another holder claimed, are listed as waiting, with why',
  positionals: [ONLY_PLAN_ARG],
  options: [],
  async run(ctx) {
    const plan = await planOrOnly(ctx, 'ready', 'read');
    const r = await ctx.store('read').ready(ctx.planKey(plan), ctx.actor);
    const line = (label: string, xs: readonly string[]) => `${label.padEnd(11)}${xs.length ? xs.join(', ') : '—'}`;
    // The text is built only if printed: with --json it would join every anchor of a large plan for nothing.
    return {
      ...output(r, ''),
      get text() {
        return [
          line('Ready:', r.ready_steps),
          ...(r.waiting_steps.length > 0
            ? [line('Waiting:', r.waiting_steps), `           ${r.waiting_reason ?? ''}`]
            : []),
          ...(r.files_waiting.length > 0
            ? [
                line(
                  'Waiting:',
                  r.files_waiting.map((w) => w.anchor),
                ),
                ...r.files_waiting.map((w) => `           ${w.message}`),
              ]
            : []),
          line('Claimed:', r.claimed_steps),
          line('Expired:', r.expired_claims),
          line('Blocked:', r.blocked_steps),
          line('Completed:', r.completed_steps),
        ].join('\n');
      },
    };
  },
};
