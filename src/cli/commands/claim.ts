import { int } from '../args.ts';
import { LEASE_OPTION, type Command } from '../command.ts';
import { claimedText, nothingClaimedText, readHead, type StepStore } from '../../core/index.ts';
import { output, until } from '../output.ts';
import { withHandOver } from '../pending.ts';
import { ONLY_PLAN_ARG, planOrOnly } from '../onlyPlan.ts';

export const claimCommand: Command<StepStore> = {
  name: 'claim',
  summary: 'atomically claim the next ready step (dependencies done, by plan order)',
  positionals: [ONLY_PLAN_ARG],
  options: [LEASE_OPTION],
  details:
    'Nothing ready is not an error: exit 0 with claimed=false and the reason.\nA ready step whose **Files:** overlap those of a step another holder claimed is passed over (reason files_busy when every one is; docs/files.md).\nA step whose lease expired is reclaimed (reclaimed_from_expired=true) with a new claim token.\nOn PostgreSQL, a claim whose reply was lost (exit 3) is picked up by running the same command again (resumed=true).',
  async run(ctx) {
    const source = ctx.currentPlanSource(await planOrOnly(ctx, 'claim', 'write'));
    // A claim whose reply an earlier process lost is looked up before a new one is made (docs/postgres-design.md, "Failures, retries, idempotence").
    // The branch this worktree is on: an epic's steps are claimed in its worktree or on its branch (docs/lifecycle.md).
    const branch = readHead(ctx.actor.worktree, ctx.env)?.branch ?? null;
    const r = await withHandOver(ctx, 'claim', { plan: source.planPath }, (resume) =>
      ctx
        .store('write')
        .claimNext(source, ctx.actor, { leaseSeconds: int(ctx.args, 'lease'), branch, ...(resume ? { resume } : {}) }),
    );
    if (!r.claimed) return output(r, nothingClaimedText(r));
    const text = [
      ...(r.resumed ? [`Resumed the claim an earlier run made (its reply was lost): ${r.step_anchor} is yours.`] : []),
      claimedText(r, r.step_anchor, new Date(), ctx.actor.worktree),
      `  token ${r.claim_token} · lease ${until(r.lease_expires_at, new Date())} · ${r.remaining_ready} more ready · ${r.total_remaining} remaining`,
      `  next: springfield start ${source.planPath} ${r.step_anchor}`,
    ].join('\n');
    return output(r, text);
  },
};
