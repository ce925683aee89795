import * as vscode from 'vscode';
import { type ClaimResult, loadPlanSource, RefusedError, takenOverText } from '../../core/index.ts';
import { shortDuration, stepName } from '../views/viewText.ts';
import type { CommandContext } from './commandContext.ts';

/** The lease for claims made in the editor (springfield.leaseSeconds). */
export function leaseSeconds(): number {
  return vscode.workspace.getConfiguration('springfield').get<number>('leaseSeconds', 7200);
}

/** Claims the next ready step of a plan for this window's worktree; says what happened in a person's words. */
export async function claimIn(ctx: CommandContext, planPath: string): Promise<{ result: ClaimResult; message: string }> {
  const source = loadPlanSource(ctx.host.actor.worktree, planPath);
  const result = await ctx.host.writable().claimNext(source, ctx.host.actor, { leaseSeconds: leaseSeconds() });
  await ctx.host.refresh();
  if (!result.claimed) {
    const why = result.reason === 'all_completed' ? 'every step is completed' : 'every open step is claimed or waits for another';
    return { result, message: `Nothing to claim in ${planPath}: ${why}.` };
  }
  ctx.revealStep?.(result.plan_path, result.step_anchor);
  const number = source.plan.steps.find((s) => s.anchor === result.step_anchor)?.number;
  const name = number ? stepName(number) : result.step_anchor;
  const takeover = result.reclaimed_from_expired
    ? ` (${takenOverText({ worktree: result.previous_holder, agent: result.previous_agent, leaseExpiresAt: result.previous_lease_expires_at }, new Date(), ctx.host.actor.worktree)})`
    : '';
  const lease = shortDuration(Date.parse(result.lease_expires_at) - Date.now() + 500);
  return { result, message: `Claimed ${name}: ${result.step_title}${takeover}. It is yours for ${lease}; heartbeat to keep it.` };
}

/** Starts an approved epic (ready → in progress) and, if asked, claims its first step for this window. */
export async function startEpicAndClaim(ctx: CommandContext, epicId: string, claim: boolean): Promise<string[]> {
  const store = ctx.host.writable();
  const versions = await store.planVersions(epicId);
  const planPath = versions.filter((v) => v.status === 'approved').at(-1)?.plan_path;
  if (!planPath) throw new RefusedError('no_approved_plan', `${epicId} has no approved plan yet: review and approve its plan first`);
  const epic = await store.getEpic(epicId);
  const lines: string[] = [];
  if (epic.status === 'ready') {
    await store.startEpic(epicId, loadPlanSource(ctx.host.actor.worktree, planPath), ctx.host.actor);
    lines.push(`Started ${epicId}: it is in progress.`);
  } else if (epic.status !== 'in_progress') {
    throw new RefusedError('not_ready', `${epicId} is ${epic.status.replace(/_/g, ' ')}; only an approved (ready) epic can be started`);
  }
  await ctx.host.refresh();
  if (claim) lines.push((await claimIn(ctx, planPath)).message);
  return lines;
}
