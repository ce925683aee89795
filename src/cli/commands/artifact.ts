import { UsageError, type StepStore } from '../../core/index.ts';
import { str } from '../args.ts';
import { arg, PLAN_ARG, STEP_ARG, TOKEN_OPTION, type Command } from '../command.ts';
import { output } from '../output.ts';
import { byEarlierRun, withHandOver } from '../pending.ts';

export const artifactCommand: Command<StepStore> = {
  name: 'artifact',
  summary: 'record a short audit breadcrumb on a step you hold',
  positionals: [PLAN_ARG, STEP_ARG],
  options: [
    {
      name: 'kind',
      type: 'string',
      placeholder: 'KIND',
      description: 'e.g. architect_strategy, reviewer_verdict, auditor_summary, note',
    },
    { name: 'summary', type: 'string', placeholder: 'TEXT', description: 'what happened (cut to 500 characters)' },
    TOKEN_OPTION,
  ],
  async run(ctx) {
    const kind = str(ctx.args, 'kind');
    const summary = str(ctx.args, 'summary');
    if (!kind || !/^[a-z][a-z0-9_]{0,39}$/.test(kind))
      throw new UsageError(
        'bad_option',
        `--kind needs a lowercase word like note or reviewer_verdict${kind ? `, got '${kind}'` : ''}`,
      );
    if (!summary || summary.trim() === '') throw new UsageError('missing_value', '--summary needs a non-empty text');
    const plan = ctx.planKey(arg(ctx, 0));
    // An artifact whose reply an earlier process lost is looked up before another is recorded (docs/postgres-design.md, "Failures, retries, idempotence").
    const r = await withHandOver(ctx, 'artifact', { plan }, (resume) =>
      ctx.store('write').recordArtifact(plan, arg(ctx, 1), kind, summary.trim(), ctx.actor, resume ? { resume } : {}),
    );
    return output(r, `Recorded ${r.kind} #${r.artifact_id} on ${r.step_anchor}${byEarlierRun(r)}`);
  },
};
