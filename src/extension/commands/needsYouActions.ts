import * as vscode from 'vscode';
import { budgetInputError, suggestedBudget } from '../model/budgetInput.ts';
import { signalFilePath } from '../model/epicFacts.ts';
import type { NeedsYouAction } from '../model/needsYou.ts';
import { shortDuration, stepName } from '../views/viewText.ts';
import { refOf, type CommandContext } from './commandContext.ts';
import { deferEpic, retryEpic } from './epicCommands.ts';
import { leaseSeconds } from './stepCommands.ts';
import { newPlan, proposePlan } from './planCommands.ts';

/** Runs what a Needs you item offers (the tree row, the dashboard's button): each through the command a person would use. */
export async function runNeedsYouAction(
  ctx: CommandContext,
  action: NeedsYouAction,
  revealEpic: (epicId: string) => void,
): Promise<void> {
  const epicRow = (epicId: string) => ({ id: `epic:${epicId}` });
  switch (action.kind) {
    case 'reviewPlan':
      return ctx.openApproval(action.epicId);
    case 'decideSignal':
      return openSignal(ctx, action.signalId);
    case 'retry':
      return retryEpic(ctx, action.epicId);
    case 'renewLease':
      return renewLease(ctx, action.planPath, action.anchor, action.worktree);
    case 'openWorktree':
      await vscode.commands.executeCommand('vscode.openFolder', vscode.Uri.file(action.path), { forceNewWindow: true });
      return;
    case 'approveMerge':
      return approveMerge(ctx, action.epicId);
    case 'openPullRequest':
      await vscode.env.openExternal(vscode.Uri.parse(action.url));
      return;
    case 'writePlan':
      await newPlan(ctx, epicRow(action.epicId));
      return;
    case 'proposePlan':
      return proposePlan(ctx, epicRow(action.epicId));
    case 'defer':
      return deferEpic(ctx, epicRow(action.epicId));
    case 'configureAgents':
      await vscode.commands.executeCommand('springfield.agents.configure');
      return;
    case 'openSourceControl':
      await vscode.commands.executeCommand('workbench.view.scm');
      return;
    case 'showEpic':
      return revealEpic(action.epicId);
    case 'raiseBudget':
      return raiseBudget(ctx, action.epicId);
    case 'reviewChanges':
      await vscode.commands.executeCommand('springfield.review.open', action.epicId);
      return;
    case 'openFile':
      await vscode.window.showTextDocument(vscode.Uri.file(action.path));
      return;
  }
}

/**
 * A paused epic's budget raised (what `springfield epic budget <epic> --usd N` sets: the epic's own
 * limit), then retried: the scheduler runs it again on its next pass (docs/budgets.md).
 */
export async function raiseBudget(ctx: CommandContext, epicId: string): Promise<void> {
  const epic = await ctx.host.writable().getEpic(epicId);
  const reason = (epic.status_reason ?? '').replace(/^budget_exhausted: /, '');
  const kind = reason.endsWith(' tokens') ? 'tokens' : reason.endsWith(' agent minutes') ? 'minutes' : 'usd';
  const unit = { usd: 'dollars', tokens: 'tokens (in + out)', minutes: 'agent minutes' }[kind];
  const spend = (await ctx.host.writable().spend(epicId)).epics.find((e) => e.epic_id === epicId);
  const spent = spend?.[kind] ?? 0;
  const limit = Number(/ of \$?([\d,.]+)/.exec(reason)?.[1]?.replace(/,/g, '') ?? Number.NaN);
  const text = await vscode.window.showInputBox({
    title: `Raise the budget of “${epic.title}”`,
    prompt: `Its agents have spent ${reason}. The ${unit} it may spend in all, as its own budget; it is retried once set.`,
    value: String(suggestedBudget(spent, Number.isFinite(limit) ? limit : null)),
    validateInput: (v) => budgetInputError(kind, v, spent, reason.replace(/ of .*/, '')),
  });
  if (text === undefined) return;
  await ctx.host.writable().setEpicBudget(epicId, { [kind]: Number(text.trim()) }, ctx.host.actor);
  await ctx.host.refresh();
  if (epic.status === 'blocked') await retryEpic(ctx, epicId);
}

/** Bart's review waits at its first place in the code (the comment thread has the decisions), else in the Signals view. */
async function openSignal(ctx: CommandContext, signalId: number): Promise<void> {
  const signal = ctx.host.snapshot?.signals.find((x) => x.id === signalId);
  const at = signal?.locations[0];
  if (!at) {
    await vscode.commands.executeCommand('springfield.signals.focus');
    return;
  }
  const root = ctx.host.location?.worktreeRoot ?? ctx.host.actor.worktree;
  const epic = ctx.host.snapshot?.epics.find((e) => e.id === signal?.epic_id);
  const pos = new vscode.Position(Math.max(0, at.line - 1), 0);
  // Where its thread is: the file in the epic's worktree (signalComments.ts), where a waiting signal's
  // thread shows expanded with its decisions (Send back to Ralph, Escalate to Lisa, Accept). Not VS
  // Code's "focus comment on current line": run before the new editor has its threads, it shows the
  // person an error ("the cursor must be on a line with a comment").
  const editor = await vscode.window.showTextDocument(vscode.Uri.file(signalFilePath(epic, at.file, root)), {
    selection: new vscode.Range(pos, pos),
  });
  editor.revealRange(new vscode.Range(pos, pos), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
}

/** A person's lease renewed where they hold it (their claim from this window went to the epic's worktree). */
async function renewLease(ctx: CommandContext, planPath: string, anchor: string, worktree: string): Promise<void> {
  const r = await ctx.host
    .writable()
    .heartbeat(planPath, anchor, { worktree, agent: null }, { leaseSeconds: leaseSeconds() });
  await ctx.host.refresh();
  const st = ctx.host.snapshot?.plans
    .find((p) => p.plan_path === planPath)
    ?.steps.flatMap((x) => [x, ...x.substeps])
    .find((x) => x.anchor === anchor);
  void vscode.window.setStatusBarMessage(
    `Springfield: ${st ? stepName(st.number) : anchor} is yours for ${shortDuration(Date.parse(r.lease_expires_at) - Date.now() + 500)} more`,
    4000,
  );
}

/** A critical epic's merge, approved by the person: the scheduler merges it on its next pass. */
export async function approveMerge(ctx: CommandContext, row?: { id: string } | string): Promise<void> {
  const epicId = typeof row === 'string' ? row : row ? refOf(ctx, row)?.epicId : undefined;
  if (!epicId) return;
  const title = ctx.host.snapshot?.epics.find((e) => e.id === epicId)?.title ?? epicId;
  const ok = await vscode.window.showWarningMessage(
    `Approve the merge of “${title}”?`,
    {
      modal: true,
      detail:
        'It is verified and reviewed. The scheduler squash-merges its branch into the main branch on its next pass.',
    },
    'Approve merge',
  );
  if (ok !== 'Approve merge') return;
  await ctx.host.writable().approveMerge(epicId, ctx.host.actor);
  await ctx.host.refresh();
  void vscode.window.showInformationMessage(`Merge of “${title}” approved: the scheduler merges it on its next pass.`);
}
