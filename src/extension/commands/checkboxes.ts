import * as vscode from 'vscode';
import { loadPlanSource } from '../../core/index.ts';
import type { CommandContext } from './commandContext.ts';
import type { Row } from '../views/treeProvider.ts';

/**
 * A ticked or unticked checklist row writes through the same core call as `springfield update`.
 * Ticking an item in a step someone else holds (or nobody holds) asks first and records it as yours.
 */
export async function onCheckboxes(
  ctx: CommandContext,
  changes: readonly (readonly [Row, vscode.TreeItemCheckboxState])[],
): Promise<void> {
  const store = ctx.host.writable();
  for (const [row, state] of changes) {
    const ref = ctx.epics.node(row)?.ref;
    if (!ref?.planPath || !ref.anchor || ref.itemId === undefined) continue;
    const step = findStep(ctx, ref.planPath, ref.anchor);
    const owner = step?.parent_anchor ? findStep(ctx, ref.planPath, step.parent_anchor) : step;
    const live = owner && (owner.status === 'claimed' || owner.status === 'in_progress');
    const mine = live && owner.claimed_by === ctx.host.actor.worktree;
    let override = false;
    if (!mine) {
      const who = live
        ? `claimed by ${owner.agent ? `${owner.agent} in ` : ''}${owner.claimed_by}`
        : 'not claimed by anyone';
      const answer = await vscode.window.showWarningMessage(
        `${ref.anchor} is ${who}. Change this item anyway? It will be recorded as yours.`,
        { modal: true },
        'Change it',
      );
      if (answer !== 'Change it') {
        await ctx.host.refresh();
        continue;
      }
      override = true;
    }
    const status = state === vscode.TreeItemCheckboxState.Checked ? 'completed' : 'open';
    await store.updateItems(
      loadPlanSource(ctx.host.actor.worktree, ref.planPath),
      ref.anchor,
      [{ selector: { id: ref.itemId }, status }],
      ctx.host.actor,
      { override },
    );
  }
  await ctx.host.refresh();
}

function findStep(ctx: CommandContext, planPath: string, anchor: string) {
  const plan = ctx.host.snapshot?.plans.find((p) => p.plan_path === planPath);
  for (const s of plan?.steps ?? []) {
    if (s.anchor === anchor) return s;
    const sub = s.substeps.find((x) => x.anchor === anchor);
    if (sub) return sub;
  }
  return undefined;
}
