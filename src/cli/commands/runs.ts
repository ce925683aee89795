import type { RunView } from '../../core/index.ts';
import { SESSION_ROLES } from '../../shared/roles.ts';
import { flag, int, str } from '../args.ts';
import { type Command } from '../command.ts';
import { duration, output } from '../output.ts';

export const runsCommand: Command = {
  name: 'runs',
  summary: 'list agent runs (newest first) and the sessions each epic has spent, by role',
  positionals: [],
  options: [
    { name: 'epic', type: 'string', placeholder: 'ID', description: 'only runs of this epic' },
    { name: 'active', type: 'boolean', description: 'only runs still running' },
    {
      name: 'limit',
      type: 'int',
      placeholder: 'N',
      description: 'at most N runs (default 200); session counts always cover every run',
      min: 1,
    },
    {
      name: 'output',
      type: 'boolean',
      description:
        'show the stored output tail (last 40 lines) of every listed run, not only the last lines of those that did not succeed',
    },
  ],
  details: [
    'Each run ends succeeded, failed (exit code), timed_out, lost (its supervising process vanished) or no_progress (exit 0 without',
    'completing, committing or ticking anything; a planner without a proposal; a reviewer without a signal), with the reason and the',
    'last 40 lines of its output (see docs/scheduler-faults.md). A run whose supervisor died shows as running until the scheduler marks',
    'it lost. Setup runs (the scheduler preparing a new worktree) are listed too but are not agent sessions.',
  ].join('\n'),
  async run(ctx) {
    const epicId = str(ctx.args, 'epic');
    const store = ctx.store('read');
    const [runs, sessions, usage] = await Promise.all([
      store.runs({ epicId, active: flag(ctx.args, 'active'), limit: int(ctx.args, 'limit') }),
      store.sessionCounts(epicId),
      store.usageByEpic(epicId),
    ]);
    const all = flag(ctx.args, 'output');
    const lines = runs.length === 0 ? ['No runs.'] : runs.flatMap((r) => [describe(r), ...outputLines(r, all)]);
    const epics = Object.entries(sessions);
    if (epics.length > 0) {
      lines.push('', 'Sessions per epic:');
      for (const [id, c] of epics)
        lines.push(`  ${id}: ${c.total} — ${SESSION_ROLES.map((r) => `${r} ${c[r]}`).join(' · ')}`);
    }
    if (usage.length > 0) {
      lines.push('', 'Usage per epic (runs whose agent reported it):');
      for (const u of usage)
        lines.push(`  ${u.epic_id} ${u.role}: ${usageText(u)} over ${u.runs} run${u.runs === 1 ? '' : 's'}`);
    }
    return output({ runs, sessions, usage }, lines.join('\n'));
  },
};

function describe(r: RunView): string {
  const where = [r.epic_id, r.step_anchor].filter((x) => x !== null).join(' ');
  const end =
    r.status === 'running'
      ? `since ${r.started_at} (pid ${r.pid ?? '?'})`
      : `${r.exit_code !== null ? `exit ${r.exit_code}` : 'no exit code'}${r.ended_at ? ` after ${duration(Date.parse(r.ended_at) - Date.parse(r.started_at))}` : ''}`;
  const used = usageText(r);
  return `#${r.id} ${r.role} ${where} [${r.status}] iteration ${r.iteration} — ${end}${used ? ` — ${used}` : ''}${r.outcome_reason ? ` — ${r.outcome_reason}` : ''}`;
}

/** "$0.0421 · 12,345 in / 2,100 out tokens", or '' when nothing was reported. */
export function usageText(u: {
  cost_usd?: number | null;
  input_tokens?: number | null;
  output_tokens?: number | null;
}): string {
  const parts: string[] = [];
  if (u.cost_usd !== null && u.cost_usd !== undefined) parts.push(`$${u.cost_usd.toFixed(4)}`);
  if ((u.input_tokens ?? null) !== null || (u.output_tokens ?? null) !== null)
    parts.push(
      `${(u.input_tokens ?? 0).toLocaleString('en-US')} in / ${(u.output_tokens ?? 0).toLocaleString('en-US')} out tokens`,
    );
  return parts.join(' · ');
}

/** The output tail under a run: all of it with --output, else the last lines of a run that did not succeed. */
function outputLines(r: RunView, all: boolean): string[] {
  const tail = r.output_tail.trimEnd();
  if (tail === '' || (!all && (r.status === 'succeeded' || r.status === 'running'))) return [];
  return tail
    .split('\n')
    .slice(all ? -40 : -3)
    .map((l) => `    | ${l}`);
}
