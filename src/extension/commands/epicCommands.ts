import * as vscode from 'vscode';
import { assertBudgetRaised, configPathFor, type EpicRow, loadRoleCommands, UsageError } from '../../core/index.ts';
import type { Row } from '../views/treeProvider.ts';
import { refOf, type CommandContext } from './commandContext.ts';
import { reportClaim, startEpicAndClaim } from './flow.ts';

function epicOf(ctx: CommandContext, row: Row | undefined): string {
  const id = refOf(ctx, row)?.epicId;
  if (!id) throw new UsageError('no_epic', 'pick an epic in the Springfield tree first');
  return id;
}

/** Create epic…: a title and Marge's brief; then offers to write its plan (New plan…). */
export async function createEpic(ctx: CommandContext, options: { offerPlan?: boolean } = {}): Promise<EpicRow | undefined> {
  const title = await vscode.window.showInputBox({ title: 'New epic (1/2): title', prompt: 'What does the epic deliver? e.g. "Add a caching layer"', validateInput: (v) => (v.trim() ? undefined : 'A title is required') });
  if (!title) return undefined;
  const brief = await vscode.window.showInputBox({
    title: 'New epic (2/2): brief', prompt: 'Intent and acceptance criteria, e.g. "Reads are slow. Acceptance: repeated reads hit the cache; writes invalidate." (optional)',
  });
  if (brief === undefined) return undefined;
  const epic = await ctx.host.writable().createEpic({ title: title.trim(), brief: brief.trim(), priority: 'P2' }, ctx.host.actor);
  await ctx.host.refresh();
  // Complexity only when it changes what the person does: a critical epic's merge waits for them.
  const message = `Created ${epic.id}: ${epic.title}${epic.complexity === 'critical' ? ' (critical: its merge waits for your approval)' : ''}. Next: its plan — New plan… writes it with you or asks Lisa.`;
  if (options.offerPlan === false) {
    void vscode.window.showInformationMessage(message);
    return epic;
  }
  void vscode.window.showInformationMessage(message, 'New plan…', 'Propose an existing plan…').then((choice) => {
    const row = { id: `epic:${epic.id}` };
    if (choice === 'New plan…') void vscode.commands.executeCommand('springfield.plan.new', row);
    else if (choice) void vscode.commands.executeCommand('springfield.epic.proposePlan', row);
  });
  return epic;
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
  if (dbPath) await assertBudgetRaised(store, await store.getEpic(epicId), loadRoleCommands(configPathFor(dbPath)).budget);
  const t = await store.applyEpicEvent(epicId, 'retry', ctx.host.actor, 'retried from the editor');
  await ctx.host.refresh();
  void vscode.window.setStatusBarMessage(`Springfield: ${epicId} is ${t.to.replace('_', ' ')} again; the scheduler starts it on its next pass`, 5000);
}
