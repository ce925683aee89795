import { existsSync } from 'node:fs';
import * as vscode from 'vscode';
import {
  claimedText,
  claimPlace,
  type ClaimResult,
  type EpicRow,
  loadPlanSource,
  nothingClaimedText,
  type PlanView,
  readHead,
  RefusedError,
  startEpicInWorktree,
  type StepView,
  UsageError,
} from '../../core/index.ts';
import { userSetting } from '../userSettings.ts';
import { baseName, shortDuration, stepName } from '../views/viewText.ts';
import type { Row } from '../views/treeProvider.ts';
import { refOf, type CommandContext } from './commandContext.ts';

/** The lease for claims made in the editor (springfield.leaseSeconds). */
export function leaseSeconds(): number {
  return vscode.workspace.getConfiguration('springfield').get<number>('leaseSeconds', 7200);
}

/**
 * Where a person's claim on `planPath` belongs (docs/lifecycle.md, "Where work happens"): an epic's
 * steps are built in its own worktree, so a claim made from a window elsewhere (not on the epic's
 * branch) is made for that worktree, and the person is offered to open it.
 */
function placeOf(ctx: CommandContext, planPath: string): { worktree: string; elsewhere: boolean } {
  const here = ctx.host.actor.worktree;
  const epicId = ctx.host.snapshot?.plans.find((p) => p.plan_path === planPath)?.epic_id;
  const epic = epicId ? ctx.host.snapshot?.epics.find((e) => e.id === epicId) : undefined;
  return claimPlace(epic ?? null, { worktree: here, branch: readHead(here, process.env)?.branch ?? null });
}

/** Claims the next ready step of a plan (in its epic's worktree); says what happened in a person's words, and where to work. */
export async function claimIn(
  ctx: CommandContext,
  planPath: string,
): Promise<{ result: ClaimResult; message: string; openIn: string | null }> {
  const place = placeOf(ctx, planPath);
  const actor = { ...ctx.host.actor, worktree: place.worktree };
  const source = loadPlanSource(place.worktree, planPath);
  const result = await ctx.host.writable().claimNext(source, actor, {
    leaseSeconds: leaseSeconds(),
    branch: readHead(place.worktree, process.env)?.branch ?? null,
  });
  await ctx.host.refresh();
  if (!result.claimed) return { result, message: nothingClaimedText(result), openIn: null };
  ctx.revealStep?.(result.plan_path, result.step_anchor);
  const number = source.plan().steps.find((s) => s.anchor === result.step_anchor)?.number;
  const claimed = claimedText(result, number ? stepName(number) : result.step_anchor, new Date(), actor.worktree);
  const lease = shortDuration(Date.parse(result.lease_expires_at) - Date.now() + 500);
  const where = place.elsewhere ? ` Its epic is built in ${baseName(place.worktree)}: work there.` : '';
  return {
    result,
    message: `${claimed}. It is yours for ${lease}; renew it while you work.${where}`,
    openIn: place.elsewhere ? place.worktree : null,
  };
}

/** Tells what happened and, when the work lives in another worktree, offers to open it (a new window, or this one). */
export async function reportClaim(message: string, openIn: string | null): Promise<void> {
  if (!openIn) {
    void vscode.window.showInformationMessage(message);
    return;
  }
  await offerWorktree(message, openIn, vscode.window.showInformationMessage);
}

/** Says `message` and offers to open the worktree `path`, in a new window or this one. */
export async function offerWorktree(
  message: string,
  path: string,
  show: typeof vscode.window.showInformationMessage,
): Promise<void> {
  const choice = await show(message, 'Open in new window', 'Open here');
  if (choice)
    await vscode.commands.executeCommand('vscode.openFolder', vscode.Uri.file(path), {
      forceNewWindow: choice === 'Open in new window',
    });
}

/**
 * Starts an approved epic (ready → in progress) in a worktree of its own, as the scheduler does
 * (docs/lifecycle.md), and, if asked, claims its first step there for this person.
 */
export async function startEpicAndClaim(
  ctx: CommandContext,
  epicId: string,
  claim: boolean,
): Promise<{ lines: string[]; openIn: string | null }> {
  const store = ctx.host.writable();
  const versions = await store.planVersions(epicId);
  const planPath = versions.filter((v) => v.status === 'approved').at(-1)?.plan_path;
  if (!planPath)
    throw new RefusedError('no_approved_plan', `${epicId} has no approved plan yet: review and approve its plan first`);
  const epic = await store.getEpic(epicId);
  const lines: string[] = [];
  let openIn: string | null = null;
  if (epic.status === 'ready') {
    const mainRoot = ctx.host.location?.mainRoot;
    if (!mainRoot) throw new UsageError('no_worktree', 'starting an epic needs a repository with a main worktree');
    const started = await startEpicInWorktree(
      store,
      mainRoot,
      epicId,
      ctx.host.actor,
      userSetting<string>('worktrees.location', '') || undefined,
    );
    lines.push(
      `Started ${epicId} in its own worktree ${baseName(started.worktree.path)} (branch ${started.worktree.branch}).`,
    );
    openIn = started.worktree.path;
  } else if (epic.status !== 'in_progress') {
    throw new RefusedError(
      'not_ready',
      `${epicId} is ${epic.status.replace(/_/g, ' ')}; only an approved (ready) epic can be started`,
    );
  }
  await ctx.host.refresh();
  if (claim) {
    const claimed = await claimIn(ctx, planPath);
    lines.push(claimed.message);
    openIn = claimed.openIn ?? openIn;
  }
  return { lines, openIn: openIn === ctx.host.actor.worktree ? null : openIn };
}

function stepOf(ctx: CommandContext, row: Row | undefined): { planPath: string; anchor: string } {
  const ref = refOf(ctx, row);
  if (!ref?.planPath || !ref.anchor) throw new UsageError('no_step', 'pick a step in the Springfield tree first');
  return { planPath: ref.planPath, anchor: ref.anchor };
}

/** The step behind a tree row, from the snapshot (substeps included). */
function stepView(ctx: CommandContext, planPath: string, anchor: string): StepView | undefined {
  const plan = ctx.host.snapshot?.plans.find((p) => p.plan_path === planPath);
  return plan?.steps.flatMap((s) => [s, ...s.substeps]).find((s) => s.anchor === anchor);
}

/**
 * "Claim next step": claims in the one plan with a step to take (asking which when several have
 * one). A plan whose epic is approved but not started is offered to start and claim instead.
 */
export async function claimNextStep(ctx: CommandContext): Promise<void> {
  const store = ctx.host.writable();
  const s = ctx.host.snapshot;
  const epics = new Map((s?.epics ?? []).map((e) => [e.id, e]));
  const claimable: { plan: PlanView; count: number; first: string }[] = [];
  const startable: EpicRow[] = [];
  for (const plan of (s?.plans ?? []).filter((p) => p.status !== 'done')) {
    const epic = plan.epic_id ? epics.get(plan.epic_id) : undefined;
    if (epic?.status === 'ready') startable.push(epic);
    if (epic && epic.status !== 'in_progress') continue;
    const r = await store.ready(plan.plan_path);
    const open = [...r.expired_claims, ...r.ready_steps];
    const first = plan.steps.find((st) => open.includes(st.anchor));
    if (first) claimable.push({ plan, count: open.length, first: `${stepName(first.number)}: ${first.title}` });
  }
  if (claimable.length === 0 && startable.length === 0) {
    const none = (s?.plans.length ?? 0) === 0 && (s?.epics.length ?? 0) === 0;
    void vscode.window.showInformationMessage(
      none
        ? 'Springfield: nothing to claim yet. Create an epic and write its plan first.'
        : 'Springfield: no step is ready: every open step is claimed or waits for another.',
    );
    return;
  }
  type Choice = { label: string; description: string; detail?: string; plan?: PlanView; epic?: EpicRow };
  const choices: Choice[] = [
    ...claimable.map((c) => ({
      label: c.plan.title || c.plan.plan_path,
      description: `next: ${c.first}`,
      detail: `${c.count} ready · ${c.plan.plan_path}${c.plan.epic_id ? ` · epic ${c.plan.epic_id}` : ''}`,
      plan: c.plan,
    })),
    ...startable.map((e) => ({
      label: `$(debug-start) Start ${e.id} and claim its first step`,
      description: e.title,
      detail: 'its plan is approved; starting it puts it in progress',
      epic: e,
    })),
  ];
  let chosen: Choice | undefined = choices[0];
  if (claimable.length === 0 && startable.length === 1 && chosen?.epic) {
    const answer = await vscode.window.showInformationMessage(
      `${chosen.epic.id} (${chosen.epic.title}) is approved but not started yet. Start it and claim its first step?`,
      'Start and claim',
    );
    if (answer !== 'Start and claim') return;
  } else if (choices.length > 1) {
    chosen = await vscode.window.showQuickPick(choices, { title: 'Claim the next step of which plan?' });
  }
  if (!chosen) return;
  if (chosen.epic) {
    const { lines, openIn } = await startEpicAndClaim(ctx, chosen.epic.id, true);
    await reportClaim(lines.join(' '), openIn);
    return;
  }
  if (!chosen.plan) return;
  const { message, openIn } = await claimIn(ctx, chosen.plan.plan_path);
  await reportClaim(message, openIn);
}

/**
 * A step a person holds in another worktree (the epic's own, where this window's claim went:
 * docs/lifecycle.md, "Where work happens") is worked on there. Says so and offers to open that
 * worktree, rather than the store's refusal naming two paths; true when it did.
 */
async function heldElsewhere(ctx: CommandContext, planPath: string, anchor: string, doing: string): Promise<boolean> {
  const st = stepView(ctx, planPath, anchor);
  const owner = st?.parent_anchor ? stepView(ctx, planPath, st.parent_anchor) : st;
  const holder =
    owner && (owner.status === 'claimed' || owner.status === 'in_progress') && !owner.agent ? owner.claimed_by : null;
  if (!st || !holder || holder === ctx.host.actor.worktree || !existsSync(holder)) return false;
  const epic = ctx.host.snapshot?.epics.find((e) => e.worktree_path === holder);
  const where = epic ? `${baseName(holder)}, the worktree where ${epic.id} is built` : baseName(holder);
  await offerWorktree(
    `${stepName(st.number)} (${st.title}) is held in ${where}, not in this window's ${baseName(ctx.host.actor.worktree)}: ${doing} it there.`,
    holder,
    vscode.window.showWarningMessage,
  );
  return true;
}

export async function startStep(ctx: CommandContext, row?: Row): Promise<void> {
  const { planPath, anchor } = stepOf(ctx, row);
  if (await heldElsewhere(ctx, planPath, anchor, 'start')) return;
  await ctx.host.writable().start(planPath, anchor, ctx.host.actor);
  await ctx.host.refresh();
}

export async function heartbeatStep(ctx: CommandContext, row?: Row): Promise<void> {
  const { planPath, anchor } = stepOf(ctx, row);
  if (await heldElsewhere(ctx, planPath, anchor, 'renew')) return;
  const r = await ctx.host.writable().heartbeat(planPath, anchor, ctx.host.actor, { leaseSeconds: leaseSeconds() });
  await ctx.host.refresh();
  const st = stepView(ctx, planPath, anchor);
  void vscode.window.setStatusBarMessage(
    `Springfield: lease of ${st ? stepName(st.number) : r.step_anchor} renewed for ${shortDuration(Date.parse(r.lease_expires_at) - Date.now() + 500)}`,
    3000,
  );
}

/**
 * Complete step…: completes when every item is ticked. Otherwise it lists what is still open and
 * asks; completing anyway needs a reason, which is recorded with the step.
 */
export async function completeStep(ctx: CommandContext, row?: Row): Promise<void> {
  const { planPath, anchor } = stepOf(ctx, row);
  if (await heldElsewhere(ctx, planPath, anchor, 'complete')) return;
  const store = ctx.host.writable();
  const source = loadPlanSource(ctx.host.actor.worktree, planPath);
  try {
    await store.complete(source, anchor, ctx.host.actor);
  } catch (err) {
    if (!(err instanceof RefusedError) || err.code !== 'incomplete') throw err;
    const st = stepView(ctx, planPath, anchor);
    const name = st ? `${stepName(st.number)} (${st.title})` : anchor;
    const open = st ? openWork(st) : [];
    // VS Code's dialog focuses its first button, so that one is harmless: it shows the open items.
    const choice = await vscode.window.showWarningMessage(
      `${name} still has ${open.length === 1 ? 'one open item' : `${open.length || 'some'} open items`}.`,
      {
        modal: true,
        detail: `${open.map((x) => `• ${x}`).join('\n')}\n\nYou can complete it anyway: you will be asked why, and the reason is kept with the step.`,
      },
      'Show open items',
      'Complete anyway…',
    );
    if (choice === 'Show open items') {
      ctx.revealStep?.(planPath, st?.parent_anchor ?? anchor);
      return;
    }
    if (choice !== 'Complete anyway…') return;
    const reason = await vscode.window.showInputBox({
      title: `Complete ${name} with open items`,
      prompt: 'Why is it done anyway? (kept with the step)',
      validateInput: (v) => (v.trim() ? undefined : 'A reason is required'),
    });
    if (!reason) return;
    await store.complete(source, anchor, ctx.host.actor, { forceReason: reason.trim() });
  }
  await ctx.host.refresh();
}

/** The open checklist items of a step and its substeps, by their text. */
function openWork(st: StepView): string[] {
  return [
    ...st.items.filter((i) => i.status !== 'completed').map((i) => i.text),
    ...st.substeps
      .filter((x) => x.status !== 'completed')
      .flatMap((x) => x.items.filter((i) => i.status !== 'completed').map((i) => `${i.text} (${stepName(x.number)})`)),
  ];
}

export async function resetStep(ctx: CommandContext, row?: Row): Promise<void> {
  const { planPath, anchor } = stepOf(ctx, row);
  const st = stepView(ctx, planPath, anchor);
  const ok = await vscode.window.showWarningMessage(
    `Reset ${st ? stepName(st.number) : anchor} to pending?`,
    { modal: true, detail: 'Whoever holds it loses the claim; ticked items stay ticked.' },
    'Reset',
  );
  if (ok !== 'Reset') return;
  await ctx.host.writable().reset(planPath, anchor, ctx.host.actor, 'reset from the editor');
  await ctx.host.refresh();
}

/** Opens the plan file at the step's heading. */
export async function openInPlan(ctx: CommandContext, row?: Row): Promise<void> {
  const { planPath, anchor } = stepOf(ctx, row);
  const source = loadPlanSource(ctx.host.actor.worktree, planPath);
  const line = source.plan().steps.find((s) => s.anchor === anchor)?.line ?? 1;
  const uri = vscode.Uri.file(`${ctx.host.actor.worktree}/${planPath}`);
  const pos = new vscode.Position(Math.max(0, line - 1), 0);
  await vscode.window.showTextDocument(uri, { selection: new vscode.Range(pos, pos) });
}

export async function openWorktree(ctx: CommandContext, row?: Row): Promise<void> {
  const { planPath, anchor } = stepOf(ctx, row);
  const step = ctx.host.snapshot?.plans.find((p) => p.plan_path === planPath)?.steps.find((s) => s.anchor === anchor);
  if (!step?.claimed_by)
    throw new RefusedError('not_claimed', `${step ? stepName(step.number) : anchor} is not claimed by any worktree`);
  await vscode.commands.executeCommand('vscode.openFolder', vscode.Uri.file(step.claimed_by), { forceNewWindow: true });
}

/** The terminal of the agent holding the step: its epic's builder terminal (one per epic and role). */
export function showTerminal(ctx: CommandContext, row?: Row): void {
  const { planPath, anchor } = stepOf(ctx, row);
  const epicId = ctx.host.snapshot?.plans.find((p) => p.plan_path === planPath)?.epic_id;
  const st = stepView(ctx, planPath, anchor);
  const terminal = epicId ? ctx.agentTerminal?.(epicId) : undefined;
  if (terminal) terminal.show();
  else
    void vscode.window.showInformationMessage(
      `Springfield: no agent terminal is open for ${st ? `${stepName(st.number)} (${st.title})` : anchor} in this window: the scheduler running here opens one for each agent it starts.`,
    );
}
