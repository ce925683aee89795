import * as vscode from 'vscode';
import type { EpicRow } from '../../core/index.ts';
import type { CommandContext } from './commandContext.ts';
import { PLANNING_ROLE } from '../../shared/roles.ts';

/**
 * Says what really happens to an epic Lisa is to plan (docs/lifecycle.md, "Who plans"): the scheduler
 * running here starts her on its next pass; otherwise the person is offered to start it, or to
 * configure an agent for Lisa first. Nothing runs unasked. `prefix` leads the message ("Created …").
 */
export async function tellLisaPlans(ctx: CommandContext, epic: EpicRow, prefix: string): Promise<void> {
  const state = ctx.scheduler?.();
  if (!state?.roles.includes(PLANNING_ROLE)) {
    const choice = await vscode.window.showInformationMessage(
      `${prefix}Lisa writes the plan for “${epic.title}” once an agent plays her: choose one, then start the scheduler.`,
      'Configure agents…',
    );
    if (choice) await vscode.commands.executeCommand('springfield.agents.configure');
    return;
  }
  if (state.running) {
    void vscode.window.showInformationMessage(
      `${prefix}Lisa writes the plan for “${epic.title}”: the scheduler starts her on its next pass. Her plan waits here for your approval.`,
    );
    return;
  }
  const choice = await vscode.window.showInformationMessage(
    `${prefix}Lisa writes the plan for “${epic.title}” when the scheduler runs. Her plan waits here for your approval.`,
    'Start scheduler',
    'Run scheduler once',
  );
  if (choice === 'Start scheduler') await vscode.commands.executeCommand('springfield.scheduler.start');
  else if (choice === 'Run scheduler once') await vscode.commands.executeCommand('springfield.scheduler.runOnce');
}
