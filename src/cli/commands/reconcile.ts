import { existsSync } from 'node:fs';
import { isDatabaseUrl, readStepTrailers, UsageError } from '../../core/index.ts';
import { flag } from '../args.ts';
import { arg, type Command } from '../command.ts';
import { output } from '../output.ts';
import { maintenanceActor } from './prune.ts';

export const reconcileCommand: Command = {
  name: 'reconcile',
  summary: 'mark steps completed from the Springfield-Step/-Plan trailers of commits on every branch',
  positionals: [{ name: 'plan', required: false, description: 'only this plan (default: every plan in the store)' }],
  options: [
    {
      name: 'force',
      type: 'boolean',
      description: "overwrite a completed step's commit hash when git names a different commit",
    },
  ],
  details: [
    'Scans git log --all; the newest commit per (plan, step) wins. One write transaction.',
    'A step already completed with a different hash is a conflict: reported and kept (the database wins) unless --force.',
  ].join('\n'),
  async run(ctx) {
    const planPath = ctx.args.positionals.length > 0 ? ctx.planKey(arg(ctx, 0)) : undefined;
    // A PostgreSQL server holds the state of every clone: only a SQLite file can be missing here.
    if (!isDatabaseUrl(ctx.dbPath) && !existsSync(ctx.dbPath))
      throw new UsageError(
        'no_database',
        `${ctx.dbPath}: no Springfield state here yet, so nothing to reconcile; run 'springfield init <plan.md>' first`,
      );
    const store = ctx.store('write');
    if (planPath !== undefined) await store.plan(planPath);
    const trailers = readStepTrailers(ctx.location.worktreeRoot ?? ctx.location.commonDir, ctx.env);
    const actor = maintenanceActor(ctx);
    const force = flag(ctx.args, 'force');
    const r = await store.reconcileTrailers(trailers, actor, { force, planPath });
    const warnings = r.conflicts.map(
      (c) =>
        `${c.plan_path} ${c.step_anchor}: the database has commit ${c.db_hash}, git has ${c.git_hash}; ` +
        (c.overwritten ? 'took the git hash (--force)' : "kept the database hash (use --force to take git's)"),
    );
    const lines = [
      `Reconciled ${r.reconciled.length} step${r.reconciled.length === 1 ? '' : 's'} from git` +
        (r.unchanged ? ` (${r.unchanged} already matched)` : ''),
      ...r.reconciled.map(
        (s) =>
          `  ${s.plan_path} ${s.step_anchor} ← ${s.commit_hash.slice(0, 12)}${s.from_status === 'completed' ? ' (hash only)' : ` (was ${s.from_status})`}`,
      ),
      ...r.conflicts.map(
        (c) =>
          `  conflict ${c.plan_path} ${c.step_anchor}: database ${c.db_hash.slice(0, 12)}, git ${c.git_hash.slice(0, 12)} — ${c.overwritten ? 'took git' : 'kept database'}`,
      ),
      ...r.unknown.map(
        (u) =>
          `  unknown ${u.plan_path} ${u.step_anchor} (commit ${u.commit_hash.slice(0, 12)}: ${u.reason === 'unknown_plan' ? 'plan not initialised' : 'no such step'})`,
      ),
      ...r.plans_completed.map((p) => `  ${p} is complete`),
    ];
    return output(r, lines.join('\n'), 0, warnings);
  },
};
