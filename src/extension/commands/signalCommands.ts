import * as vscode from 'vscode';
import type { SignalDecision } from '../../core/epics/signals.ts';
import { UsageError } from '../../core/errors.ts';
import type { Row } from '../views/treeProvider.ts';
import { refOf, type CommandContext } from './context.ts';

/** Resolves what the action was invoked on: a Signals tree row or a comment thread in the editor. */
export type SignalTarget = Row | vscode.CommentThread | undefined;

export async function decide(ctx: CommandContext, target: SignalTarget, decision: SignalDecision, signalOfThread: (t: vscode.CommentThread) => number | undefined): Promise<void> {
  const id = target && 'uri' in target ? signalOfThread(target) : refOf(ctx, target as Row | undefined)?.signalId;
  if (id === undefined) throw new UsageError('no_signal', 'pick a signal first');
  const t = await ctx.host.writable().decideSignal(id, decision, ctx.host.actor);
  await ctx.host.refresh();
  void vscode.window.showInformationMessage(`Signal #${id}: ${t.epic_id} is now ${t.to.replace('_', ' ')}${t.next_role ? ` — next: ${t.next_role}` : ''}.`);
}

export async function openLocation(ctx: CommandContext, row?: Row): Promise<void> {
  const ref = refOf(ctx, row);
  if (!ref?.file) return;
  const root = ctx.host.location?.worktreeRoot ?? ctx.host.actor.worktree;
  const pos = new vscode.Position(Math.max(0, (ref.line ?? 1) - 1), 0);
  await vscode.window.showTextDocument(vscode.Uri.file(`${root}/${ref.file}`), { selection: new vscode.Range(pos, pos) });
}
