import { type ReviewComment, type ReviewResult, submitReview, UsageError } from '../../core/index.ts';
import { flag, list, str } from '../args.ts';
import { arg, EPIC_ARG, type Command } from '../command.ts';
import type { CliContext } from '../cliContext.ts';
import { output } from '../output.ts';
import { planningStore } from '../planning.ts';
import { repoPlace } from '../repoLocation.ts';

export const reviewCommand: Command = {
  name: 'review',
  summary: "a person's review of an epic's changes: line comments, then request changes (back to Ralph) or approve",
  positionals: [EPIC_ARG],
  options: [
    {
      name: 'comment',
      type: 'string',
      multiple: true,
      placeholder: 'FILE:LINE[:END]:TEXT',
      description: "a comment on a line (or lines) of a file the epic's branch changes (repeatable)",
    },
    {
      name: 'request-changes',
      type: 'boolean',
      description: 'send the epic back to Ralph with the comments (implemented or verified → in_progress)',
    },
    {
      name: 'approve',
      type: 'boolean',
      description: 'the epic passes review (implemented → verified); for a critical epic, also the merge approval',
    },
    {
      name: 'summary',
      type: 'string',
      placeholder: 'TEXT',
      description: 'the review in one sentence (default: made from the comments)',
    },
  ],
  details: [
    "The changes are springfield/<epic> against the main worktree's branch, from their merge base; a comment must be on a file they add or change, within its lines at the branch's tip.",
    "Recorded as a review signal under your agent id (--agent / SPRINGFIELD_AGENT, else marge): request changes is an implementation_failure with one location per comment, its text as the note, and Ralph's next context carries each one; approve is a pass.",
    'Everything is checked before anything is written.',
  ].join('\n'),
  async run(ctx) {
    const requestChanges = flag(ctx.args, 'request-changes');
    const approve = flag(ctx.args, 'approve');
    if (requestChanges === approve)
      throw new UsageError('missing_option', "'review' needs exactly one of --request-changes or --approve");
    const comments = list(ctx.args, 'comment').map((c) => parseComment(ctx, c));
    const summary = str(ctx.args, 'summary') ?? null;
    const r = await submitReview(
      planningStore(ctx, 'write'),
      ctx.location.mainRoot ?? ctx.location.commonDir,
      ctx.env,
      {
        epicId: arg(ctx, 0),
        decision: requestChanges ? 'request_changes' : 'approve',
        comments,
        summary,
        actor: ctx.actor,
      },
    );
    return output(r, describe(r));
  },
};

/** `FILE:LINE[:END]:TEXT`: the first `:<digits>` ends the file; a second `:<digits>:` is the end line. */
function parseComment(ctx: CliContext, value: string): ReviewComment {
  const m = /^(.+?):(\d+)(?::(\d+))?:([\s\S]*)$/.exec(value);
  if (!m) throw new UsageError('bad_location', `--comment needs FILE:LINE[:END]:TEXT, got '${value}'`);
  const text = (m[4] as string).trim();
  if (text === '') throw new UsageError('missing_value', `--comment ${m[1]}:${m[2]}: the comment text is empty`);
  const place = repoPlace(ctx, m[1] as string, m[2] as string, m[3]);
  return { file: place.file, line: place.line, endLine: place.endLine, text };
}

function describe(r: ReviewResult): string {
  const count = `${r.comments} comment${r.comments === 1 ? '' : 's'}`;
  const t = r.transition;
  const move = t ? `${t.from} → ${t.to}${t.to === 'in_progress' ? ` (build iteration ${t.iteration})` : ''}` : '';
  const by = r.signal ? ` (signal #${r.signal.signal_id}, recorded as ${r.reviewer})` : ` (recorded as ${r.reviewer})`;
  if (r.decision === 'request_changes') {
    // Past the build budget the epic is blocked instead (docs/state-machine.md, "Budgets and iterations").
    if (t?.to === 'blocked')
      return `Requested changes on ${r.epic_id} with ${count}, but it is blocked: ${t.reason ?? 'no build iteration left'}${by}`;
    return `Sent ${r.epic_id} back to Ralph with ${count}: ${move}${by}`;
  }
  const merge = r.merge_approved ? `${move ? ' · ' : ''}merge approved` : '';
  return `Approved ${r.epic_id}${r.comments ? ` with ${count}` : ''}: ${move}${merge}${by}`;
}
