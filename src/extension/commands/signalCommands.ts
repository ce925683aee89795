import * as vscode from 'vscode';
import { type SignalDecision, UsageError } from '../../core/index.ts';
import { runConfig } from '../editorScheduler.ts';
import { ROLE_NAMES, SIGNAL_WORDS, statusWord } from '../views/viewText.ts';
import type { Row } from '../views/treeProvider.ts';
import { isRoleIn, STARTED_ROLES } from '../../shared/roles.ts';
import { signalFilePath } from '../model/epicFacts.ts';
import { refOf, type CommandContext } from './commandContext.ts';

/** What the action was invoked on: a Signals tree row, a comment thread, or a thread's note box (a reply). */
export type SignalTarget = Row | vscode.CommentThread | vscode.CommentReply | undefined;

const DONE: Readonly<Record<SignalDecision, string>> = {
  send_back: 'Sent back to Ralph',
  escalate: 'Escalated to Lisa',
  accept: 'Accepted',
};

/**
 * A person's decision on a signal that waits for one, with the note typed in the thread (if any).
 * Accept asks first: it passes the epic's review. When the role the epic goes to has no agent
 * configured, the message says so, since nothing will pick the work up by itself.
 */
export async function decide(
  ctx: CommandContext,
  target: SignalTarget,
  decision: SignalDecision,
  signalOfThread: (t: vscode.CommentThread) => number | undefined,
): Promise<void> {
  const thread = target && 'thread' in target ? target.thread : target && 'uri' in target ? target : undefined;
  const id = thread ? signalOfThread(thread) : refOf(ctx, target as Row | undefined)?.signalId;
  if (id === undefined) throw new UsageError('no_signal', 'pick a signal first');
  const note = target && 'text' in target && typeof target.text === 'string' ? target.text.trim() || null : null;
  const signal = ctx.host.snapshot?.signals.find((x) => x.id === id);
  if (decision === 'accept') {
    const what = signal ? `${SIGNAL_WORDS[signal.type] ?? signal.type}: "${signal.summary}"` : `signal #${id}`;
    const ok = await vscode.window.showWarningMessage(
      `Accept ${signal?.epic_id ?? 'the epic'} as it is?`,
      {
        modal: true,
        detail: `Bart reported ${what}. Accepting overrules that: the epic passes review and goes on to be merged.`,
      },
      'Accept',
    );
    if (ok !== 'Accept') return;
  }
  const t = await ctx.host.writable().decideSignal(id, decision, ctx.host.actor, note);
  await ctx.host.refresh();
  // Merging is mechanical (the scheduler does it): only agent roles can be missing.
  const role = isRoleIn(STARTED_ROLES, t.next_role) ? t.next_role : null;
  const hint =
    role && !hasAgent(ctx, role)
      ? ` No agent is configured for ${ROLE_NAMES[role] ?? role}, so nothing picks this up by itself: configure one, or do it yourself.`
      : '';
  const message = `${DONE[decision]}: ${t.epic_id} is now ${statusWord(t.to)}${note ? ' (your note is recorded)' : ''}.${hint}`;
  if (!hint) {
    void vscode.window.showInformationMessage(message);
    return;
  }
  void vscode.window.showInformationMessage(message, 'Configure agents…').then((choice) => {
    if (choice) void vscode.commands.executeCommand('workbench.action.openSettings', 'springfield.roles');
  });
}

/** Whether the role has an agent command (settings or .springfield/config.json). */
export function hasAgent(ctx: CommandContext, role: string): boolean {
  try {
    return Boolean(runConfig(ctx.host).roles[role as keyof ReturnType<typeof runConfig>['roles']]?.length);
  } catch {
    return false;
  }
}

export async function openLocation(ctx: CommandContext, row?: Row): Promise<void> {
  const ref = refOf(ctx, row);
  if (!ref?.file) return;
  const root = ctx.host.location?.worktreeRoot ?? ctx.host.actor.worktree;
  const epicId = ctx.host.snapshot?.signals.find((x) => x.id === ref.signalId)?.epic_id;
  const epic = ctx.host.snapshot?.epics.find((e) => e.id === epicId);
  const pos = new vscode.Position(Math.max(0, (ref.line ?? 1) - 1), 0);
  // The place in the epic's worktree, where its thread is (signalComments.ts).
  await vscode.window.showTextDocument(vscode.Uri.file(signalFilePath(epic, ref.file, root)), {
    selection: new vscode.Range(pos, pos),
  });
}
