import * as vscode from 'vscode';
import { RefusedError, UsageError } from '../../core/errors.ts';
import { loadPlanSource } from '../../core/plan/source.ts';
import type { Row } from '../views/treeProvider.ts';
import { refOf, type CommandContext } from './context.ts';

function leaseSeconds(): number {
  return vscode.workspace.getConfiguration('springfield').get<number>('leaseSeconds', 7200);
}

function stepOf(ctx: CommandContext, row: Row | undefined): { planPath: string; anchor: string } {
  const ref = refOf(ctx, row);
  if (!ref?.planPath || !ref.anchor) throw new UsageError('no_step', 'pick a step in the Springfield tree first');
  return { planPath: ref.planPath, anchor: ref.anchor };
}

/** "Claim next step": asks which plan when several have ready steps. */
export async function claimNextStep(ctx: CommandContext): Promise<void> {
  const store = ctx.host.writable();
  const plans = (ctx.host.snapshot?.plans ?? []).filter((p) => p.status !== 'done');
  const ready = [];
  for (const p of plans) {
    const r = await store.ready(p.plan_path);
    if (r.ready_steps.length > 0) ready.push({ plan: p, count: r.ready_steps.length, first: r.ready_steps[0] });
  }
  if (ready.length === 0) {
    void vscode.window.showInformationMessage(plans.length === 0 ? 'Springfield: no plans yet. Initialise one first.' : 'Springfield: no step is ready — every open step is claimed or waits on a dependency.');
    return;
  }
  let chosen = ready[0];
  if (ready.length > 1) {
    const pick = await vscode.window.showQuickPick(ready.map((r) => ({
      label: r.plan.title || r.plan.plan_path, description: `${r.count} ready · next ${r.first}`, detail: `${r.plan.plan_path}${r.plan.epic_id ? ` · epic ${r.plan.epic_id}` : ''}`, r,
    })), { title: 'Claim the next step of which plan?' });
    if (!pick) return;
    chosen = pick.r;
  }
  if (!chosen) return;
  const source = loadPlanSource(ctx.host.actor.worktree, chosen.plan.plan_path);
  const result = await store.claimNext(source, ctx.host.actor, { leaseSeconds: leaseSeconds() });
  await ctx.host.refresh();
  if (!result.claimed) {
    void vscode.window.showInformationMessage(`Springfield: nothing to claim in ${result.plan_path} (${result.reason.replace(/_/g, ' ')}).`);
    return;
  }
  ctx.revealStep?.(result.plan_path, result.step_anchor);
  void vscode.window.showInformationMessage(`Claimed ${result.step_anchor}: ${result.step_title} — token ${result.claim_token}, lease until ${new Date(result.lease_expires_at).toLocaleTimeString()}`);
}

export async function startStep(ctx: CommandContext, row?: Row): Promise<void> {
  const { planPath, anchor } = stepOf(ctx, row);
  await ctx.host.writable().start(planPath, anchor, ctx.host.actor);
  await ctx.host.refresh();
}

export async function heartbeatStep(ctx: CommandContext, row?: Row): Promise<void> {
  const { planPath, anchor } = stepOf(ctx, row);
  const r = await ctx.host.writable().heartbeat(planPath, anchor, ctx.host.actor, { leaseSeconds: leaseSeconds() });
  await ctx.host.refresh();
  void vscode.window.setStatusBarMessage(`Springfield: lease of ${r.step_anchor} renewed`, 3000);
}

/** Complete strictly; when items are open, offer to force with a reason. */
export async function completeStep(ctx: CommandContext, row?: Row): Promise<void> {
  const { planPath, anchor } = stepOf(ctx, row);
  const store = ctx.host.writable();
  const source = loadPlanSource(ctx.host.actor.worktree, planPath);
  try {
    await store.complete(source, anchor, ctx.host.actor);
  } catch (err) {
    if (!(err instanceof RefusedError) || err.code !== 'incomplete') throw err;
    const choice = await vscode.window.showWarningMessage(err.message, { modal: true }, 'Force complete…');
    if (choice !== 'Force complete…') return;
    const reason = await vscode.window.showInputBox({ title: `Force-complete ${anchor}`, prompt: 'Why complete it with open items? (recorded)', validateInput: (v) => (v.trim() ? undefined : 'A reason is required') });
    if (!reason) return;
    await store.complete(source, anchor, ctx.host.actor, { forceReason: reason.trim() });
  }
  await ctx.host.refresh();
}

export async function resetStep(ctx: CommandContext, row?: Row): Promise<void> {
  const { planPath, anchor } = stepOf(ctx, row);
  const ok = await vscode.window.showWarningMessage(`Reset ${anchor} to pending? Its holder loses the claim.`, { modal: true }, 'Reset');
  if (ok !== 'Reset') return;
  await ctx.host.writable().reset(planPath, anchor, ctx.host.actor, 'reset from the editor');
  await ctx.host.refresh();
}

/** Opens the plan file at the step's heading. */
export async function openInPlan(ctx: CommandContext, row?: Row): Promise<void> {
  const { planPath, anchor } = stepOf(ctx, row);
  const source = loadPlanSource(ctx.host.actor.worktree, planPath);
  const line = source.plan.steps.find((s) => s.anchor === anchor)?.line ?? 1;
  const uri = vscode.Uri.file(`${ctx.host.actor.worktree}/${planPath}`);
  const pos = new vscode.Position(Math.max(0, line - 1), 0);
  await vscode.window.showTextDocument(uri, { selection: new vscode.Range(pos, pos) });
}

export async function openWorktree(ctx: CommandContext, row?: Row): Promise<void> {
  const { planPath, anchor } = stepOf(ctx, row);
  const step = ctx.host.snapshot?.plans.find((p) => p.plan_path === planPath)?.steps.find((s) => s.anchor === anchor);
  if (!step?.claimed_by) throw new RefusedError('not_claimed', `${anchor} is not claimed by any worktree`);
  await vscode.commands.executeCommand('vscode.openFolder', vscode.Uri.file(step.claimed_by), { forceNewWindow: true });
}

export function showTerminal(ctx: CommandContext, row?: Row): void {
  const { anchor } = stepOf(ctx, row);
  const terminal = vscode.window.terminals.find((t) => t.name.includes(anchor));
  if (terminal) terminal.show();
  else void vscode.window.showInformationMessage(`Springfield: no agent terminal is open for ${anchor} in this window.`);
}

