import * as vscode from 'vscode';
import {
  claimedText,
  claimPlace,
  type ClaimResult,
  loadPlanSource,
  nothingClaimedText,
  readHead,
  RefusedError,
  startEpicInWorktree,
  UsageError,
} from '../../core/index.ts';
import { userSetting } from '../userSettings.ts';
import { baseName, shortDuration, stepName } from '../views/viewText.ts';
import type { CommandContext } from './commandContext.ts';

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
