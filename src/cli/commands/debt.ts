import { flag } from '../args.ts';
import type { Command } from '../command.ts';
import { output } from '../output.ts';
import { planningStore } from '../planning.ts';

export const debtCommand: Command = {
  name: 'debt',
  summary: 'the debt register: epics set aside (deferred, a plan discarded), why, and since when',
  positionals: [],
  options: [{ name: 'all', type: 'boolean', description: 'include entries closed by a resume' }],
  details:
    'An entry is opened whenever an epic goes to deferred and closed when a person resumes it (springfield epic resume <epic>).',
  async run(ctx) {
    const rows = await planningStore(ctx, 'read').debt({ all: flag(ctx.args, 'all') });
    const lines =
      rows.length === 0
        ? [flag(ctx.args, 'all') ? 'The debt register is empty' : 'No open debt: no epic is set aside']
        : rows.map(
            (d) =>
              `${d.epic_id}  ${d.title} — ${d.reason} (${d.event} from ${d.from_status}, ${d.recorded_at.slice(0, 16).replace('T', ' ')} by ${d.recorded_by ?? '?'})${d.resolved_at ? ` · closed ${d.resolved_at.slice(0, 16).replace('T', ' ')}: ${d.resolution ?? ''}` : ''}`,
          );
    return output({ debt: rows }, lines.join('\n'));
  },
};
