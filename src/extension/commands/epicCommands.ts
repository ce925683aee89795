import * as vscode from 'vscode';
import {
  assertBudgetRaised,
  configPathFor,
  type EpicRow,
  loadRoleCommands,
  type Planner,
  UsageError,
} from '../../core/index.ts';
import { tellLisaPlans } from './lisaPlans.ts';
import type { Row } from '../views/treeProvider.ts';
import { refOf, type CommandContext } from './commandContext.ts';
import { reportClaim, startEpicAndClaim } from './stepCommands.ts';
import { PLANNING_ROLE } from '../../shared/roles.ts';

function epicOf(ctx: CommandContext, row: Row | undefined): string {
  const id = refOf(ctx, row)?.epicId;
  if (!id) throw new UsageError('no_epic', 'pick an epic in the Springfield tree first');
  return id;
}

/**
 * Create epic…: a title, Marge's brief, and who writes its plan — Lisa (the scheduler plans it) or the
 * person (New plan… is offered). The message says what will really happen (docs/lifecycle.md, "Who
 * plans"). From New plan… (`offerPlan: false`) the third question is New plan…'s own, so the epic is
 * the person's until they answer it: no scheduler starts Lisa on it meanwhile.
 */
export async function createEpic(
  ctx: CommandContext,
  options: { offerPlan?: boolean } = {},
): Promise<EpicRow | undefined> {
  const steps = options.offerPlan === false ? 2 : 3;
  const title = await vscode.window.showInputBox({
    title: `New epic (1/${steps}): title`,
    prompt: 'What does the epic deliver? e.g. "Add a caching layer"',
    validateInput: (v) => (v.trim() ? undefined : 'A title is required'),
  });
  if (!title) return undefined;
  const brief = await vscode.window.showInputBox({
    title: `New epic (2/${steps}): brief`,
    prompt:
      'Intent and acceptance criteria, e.g. "Reads are slow. Acceptance: repeated reads hit the cache; writes invalidate." (optional)',
  });
  if (brief === undefined) return undefined;
  let planner: Planner = 'person';
  if (options.offerPlan !== false) {
    const who = await whoPlans(ctx);
    if (!who) return undefined;
    planner = who;
  }
  const epic = await ctx.host
    .writable()
    .createEpic({ title: title.trim(), brief: brief.trim(), priority: 'P2', planner }, ctx.host.actor);
  await ctx.host.refresh();
  // Complexity only when it changes what the person does: a critical epic's merge waits for them.
  const created = `Created ${epic.id}: ${epic.title}${epic.complexity === 'critical' ? ' (critical: its merge waits for your approval)' : ''}.`;
  if (options.offerPlan === false) {
    void vscode.window.showInformationMessage(created);
    return epic;
  }
  if (planner === PLANNING_ROLE) {
    void tellLisaPlans(ctx, epic, `${created} `);
    return epic;
  }
  void vscode.window
    .showInformationMessage(`${created} Next: write its plan.`, 'New plan…', 'Propose an existing plan…')
    .then((choice) => {
      const row = { id: `epic:${epic.id}` };
      if (choice === 'New plan…') void vscode.commands.executeCommand('springfield.plan.new', row);
      else if (choice) void vscode.commands.executeCommand('springfield.epic.proposePlan', row);
    });
  return epic;
}

/** Create epic…'s third question: Lisa first once an agent plays her, else the person. */
async function whoPlans(ctx: CommandContext): Promise<Planner | undefined> {
  const state = ctx.scheduler?.();
  const staffed = state?.roles.includes(PLANNING_ROLE) ?? false;
  const me = {
    label: '$(edit) I write it',
    description: 'New plan… opens a template with the brief; you propose it',
    who: 'person' as const,
  };
  const lisa = {
    label: '$(hubot) Lisa writes it',
    description: !staffed
      ? 'no agent plays Lisa yet: Configure agents… first'
      : state?.running
        ? 'the scheduler starts her now; her plan comes back for your approval'
        : 'when the scheduler runs; her plan comes back for your approval',
    who: PLANNING_ROLE,
  };
  const pick = await vscode.window.showQuickPick(staffed ? [lisa, me] : [me, lisa], {
    title: `New epic (3/3): who writes its plan?`,
  });
  return pick?.who;
}

export function reviewPlan(ctx: CommandContext, row?: Row): void {
  ctx.openApproval(epicOf(ctx, row));
}

/** Start epic (and, from "Start and claim", its first step for this window). */
export async function startEpic(ctx: CommandContext, row?: Row, claim = false): Promise<void> {
  const { lines, openIn } = await startEpicAndClaim(ctx, epicOf(ctx, row), claim);
  await reportClaim(lines.join(' '), openIn);
}

export async function deferEpic(ctx: CommandContext, row?: Row): Promise<void> {
  const epicId = epicOf(ctx, row);
  const reason = await vscode.window.showInputBox({ title: `Defer ${epicId}`, prompt: 'Why? (optional, recorded)' });
  if (reason === undefined) return;
  await ctx.host.writable().applyEpicEvent(epicId, 'defer', ctx.host.actor, reason.trim() || null);
  await ctx.host.refresh();
}

export async function resumeEpic(ctx: CommandContext, row?: Row): Promise<void> {
  await ctx.host.writable().applyEpicEvent(epicOf(ctx, row), 'resume', ctx.host.actor, 'resumed from the editor');
  await ctx.host.refresh();
}

/** Lifts an agent_failed, plan_drift or budget_exhausted block: the epic goes back to where it was, and the failing role runs again. */
export async function retryEpic(ctx: CommandContext, row?: Row | string): Promise<void> {
  const epicId = typeof row === 'string' ? row : epicOf(ctx, row);
  const store = ctx.host.writable();
  // A paused epic whose budget is still spent is refused, as on the command line (docs/budgets.md).
  const dbPath = ctx.host.dbPath;
  if (dbPath)
    await assertBudgetRaised(store, await store.getEpic(epicId), loadRoleCommands(configPathFor(dbPath)).budget);
  const t = await store.applyEpicEvent(epicId, 'retry', ctx.host.actor, 'retried from the editor');
  await ctx.host.refresh();
  void vscode.window.setStatusBarMessage(
    `Springfield: ${epicId} is ${t.to.replace('_', ' ')} again; the scheduler starts it on its next pass`,
    5000,
  );
}
