import { join } from 'node:path';
import { UsageError, type StepStore } from '../core/index.ts';
import type { PositionalSpec } from './args.ts';
import { PLAN_ARG } from './command.ts';
import type { CliContext } from './cliContext.ts';

/** The plan of `ready` and `claim`: optional when the repository has only one. */
export const ONLY_PLAN_ARG: PositionalSpec = {
  ...PLAN_ARG,
  required: false,
  description: "path to the plan file (markdown); default: the repository's only plan",
};

/**
 * The plan the command was given, else the repository's only plan (its path in this worktree). With
 * none or several recorded, a usage error that names them.
 */
export async function planOrOnly(ctx: CliContext<StepStore>, command: string, mode: 'read' | 'write'): Promise<string> {
  const given = ctx.args.positionals[0];
  if (given !== undefined) return given;
  const plans = (await ctx.store(mode).showPlans()).map((p) => p.plan_path).sort();
  const [only] = plans;
  if (only !== undefined && plans.length === 1) return join(ctx.location.worktreeRoot ?? ctx.cwd, only);
  throw new UsageError(
    'missing_argument',
    plans.length === 0
      ? `'${command}' needs <plan>: this repository has no plan yet (springfield init PLAN records one)`
      : `'${command}' needs <plan>: this repository has ${plans.length} plans: ${plans.join(', ')}`,
  );
}
