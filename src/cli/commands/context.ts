import { AGENT_ROLES, retryLines, UsageError } from '../../core/index.ts';
import { str } from '../args.ts';
import { type Command } from '../command.ts';
import { output } from '../output.ts';
import { renderContext } from '../render/contextText.ts';
import { planningStore, retriesOf } from '../planning.ts';
import { contextForRole } from '../rolePromptText.ts';

export const contextCommand: Command = {
  name: 'context',
  summary: 'everything a fresh agent session needs to resume: intent, step, items, signals, next commands',
  positionals: [],
  options: [
    {
      name: 'epic',
      type: 'string',
      placeholder: 'ID',
      description: 'the epic (default: env SPRINGFIELD_EPIC, else the epic of the step you hold)',
    },
    {
      name: 'step',
      type: 'string',
      placeholder: 'ANCHOR',
      description: 'the step (default: env SPRINGFIELD_STEP, else the step this worktree holds)',
    },
    {
      name: 'role',
      type: 'string',
      placeholder: 'ROLE',
      description: "put this role's instructions first, as `springfield run` does (default: env SPRINGFIELD_ROLE)",
    },
  ],
  details:
    'Small, step-specific facts are inlined; stable large documents (PLAN.md, ADRs, the whole plan) are listed by path to read.\nInside `springfield run` (SPRINGFIELD_ROLE set), or with --role, the previous run of that role on the epic is shown when it did not succeed: its outcome, reason and last output lines.',
  async run(ctx) {
    const epicId = str(ctx.args, 'epic') ?? (ctx.env.SPRINGFIELD_EPIC || undefined);
    const stepAnchor = str(ctx.args, 'step') ?? (ctx.env.SPRINGFIELD_STEP || undefined);
    const given = str(ctx.args, 'role');
    if (given !== undefined && !(AGENT_ROLES as readonly string[]).includes(given))
      throw new UsageError('bad_option', `--role must be one of ${AGENT_ROLES.join(', ')}, got '${given}'`);
    const role = given ?? (ctx.env.SPRINGFIELD_ROLE || null);
    const runId = Number(ctx.env.SPRINGFIELD_RUN_ID) || undefined;
    const view = await planningStore(ctx, 'read').context({
      epicId,
      stepAnchor,
      actor: ctx.actor,
      docsRoot: ctx.location.mainRoot ?? ctx.location.worktreeRoot,
      role: role ?? undefined,
      beforeRun: runId,
    });
    const planPath = ctx.env.SPRINGFIELD_PLAN || null;
    // Inside a run the agent is the retry: what the scheduler waits for is for the people asking.
    const retries = view.epic && !runId ? await retriesOf(ctx, planningStore(ctx, 'read'), view.epic.id) : [];
    const text =
      renderContext(view) +
      (retries.length
        ? `\n\n## Backing off\n${retryLines(retries)
            .map((l) => `- ${l}`)
            .join('\n')}`
        : '');
    return output({ ...view, retries }, contextForRole(ctx, role, view, planPath, text));
  },
};
