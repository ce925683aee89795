import { readRevertFacts } from '../../core/git/reverts.ts';
import {
  buildLedger,
  revertedEpics,
  statsBy,
  statsReport,
  STATS_BY,
  windowStart,
  type GroupFigures,
} from '../../core/stats/index.ts';
import { str } from '../args.ts';
import { type Command } from '../command.ts';
import { output } from '../output.ts';

export const statsCommand: Command = {
  name: 'stats',
  summary:
    'the outcome ledger: what a merged step costs, how often work passes review first time, per preset, model, role, kind or epic',
  positionals: [],
  options: [
    {
      name: 'since',
      type: 'string',
      placeholder: 'SPAN',
      description: 'only this window: 30m, 12h, 7d, 2w or a date (2026-11-01); default: all history',
    },
    {
      name: 'by',
      type: 'string',
      placeholder: 'GROUP',
      description: `group by ${STATS_BY.join('|')} (default preset)`,
    },
  ],
  details: [
    'Every figure is defined in docs/stats.md and can be recomputed from `springfield runs` and `springfield events`.',
    'A merged step is a completed step of an epic merged in the window; it belongs to the preset and model of the builder session',
    "that completed it. Its cost is its own sessions' plus an equal share of its epic's sessions on no step (planning, review).",
  ].join('\n'),
  async run(ctx) {
    const by = statsBy(str(ctx.args, 'by'));
    const sinceArg = str(ctx.args, 'since');
    const since = sinceArg === undefined ? null : windowStart(sinceArg, new Date());
    const rows = await ctx.store('read').statsRows(since);
    // Reverts are read from the main worktree's branch, where merges land (docs/stats.md, "Terms").
    const root = ctx.location.mainRoot ?? ctx.location.commonDir;
    const facts = readRevertFacts(root, 'HEAD', ctx.env);
    const report = statsReport(buildLedger(rows, facts && revertedEpics(rows, facts)), by);
    const lines = [
      `Outcome ledger by ${by}${since ? ` since ${since}` : ' (all history)'}:`,
      ...(report.groups.length === 0 ? ['  no ended agent sessions or merged steps yet'] : report.groups.map(line)),
      line(report.total),
    ];
    return output(report, lines.join('\n'));
  },
};

const money = (n: number | null) => (n === null ? '—' : `$${n.toFixed(2)}`);
const num = (n: number | null) => (n === null ? '—' : String(Math.round(n * 100) / 100));

function line(g: GroupFigures): string {
  const fp =
    g.first_pass.reviewed === 0 ? 'no reviews' : `${g.first_pass.accepted}/${g.first_pass.reviewed} first-pass`;
  return [
    `  ${g.group}:`,
    `${g.runs} run${g.runs === 1 ? '' : 's'}`,
    `${g.merged_steps} merged step${g.merged_steps === 1 ? '' : 's'}${g.reverted_steps ? ` (${g.reverted_steps} reverted)` : ''}`,
    `${money(g.cost_per_merged_step)}/step`,
    `${num(g.sessions_per_merged_step)} sessions/step (seed ${num(g.seed_sessions_per_merged_step)})`,
    fp,
    `${g.rework_sessions} re-work`,
    `${num(g.hours_to_merge)} h to merge`,
    ...(g.conflicts.met > 0 ? [`${g.conflicts.met} conflict(s), ${g.conflicts.resolved} resolved`] : []),
  ]
    .join(' · ')
    .replace(': · ', ': ');
}
