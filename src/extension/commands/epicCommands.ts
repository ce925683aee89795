import { readFileSync } from 'node:fs';
import { relative, sep } from 'node:path';
import * as vscode from 'vscode';
import { UsageError } from '../../core/errors.ts';
import { loadPlanSource } from '../../core/plan/source.ts';
import type { Row } from '../views/treeProvider.ts';
import { refOf, type CommandContext } from './context.ts';

function epicOf(ctx: CommandContext, row: Row | undefined): string {
  const id = refOf(ctx, row)?.epicId;
  if (!id) throw new UsageError('no_epic', 'pick an epic in the Springfield tree first');
  return id;
}

/** Asks for a markdown plan file inside this worktree; returns its repository-relative path. */
async function pickPlanFile(ctx: CommandContext, title: string): Promise<string | undefined> {
  const root = ctx.host.actor.worktree;
  const files = await vscode.workspace.findFiles('**/*.md', '{**/node_modules/**,**/.springfield/**}', 500);
  const items = files.map((f) => relative(root, f.fsPath).split(sep).join('/')).filter((p) => !p.startsWith('..')).sort()
    .map((p) => ({ label: p, description: /plan/i.test(p) ? 'plan' : undefined }));
  const pick = await vscode.window.showQuickPick(items, { title, placeHolder: 'A markdown plan with "## Step N: Title" headings' });
  return pick?.label;
}

export async function initHere(ctx: CommandContext): Promise<void> {
  const planPath = await pickPlanFile(ctx, 'Initialise Springfield with which plan?');
  if (!planPath) return;
  const r = await ctx.host.writable().initPlan(loadPlanSource(ctx.host.actor.worktree, planPath), ctx.host.actor);
  await ctx.host.refresh();
  void vscode.window.showInformationMessage(r.already_initialized ? `${planPath} was already initialised.` : `Initialised ${planPath}: ${r.steps_created} steps, ${r.checklist_items_created} items.`);
}

export async function createEpic(ctx: CommandContext): Promise<void> {
  const title = await vscode.window.showInputBox({ title: 'New epic (1/2)', prompt: 'What does the epic deliver?', validateInput: (v) => (v.trim() ? undefined : 'A title is required') });
  if (!title) return;
  const brief = await vscode.window.showInputBox({ title: 'New epic (2/2)', prompt: "Marge's brief: intent and acceptance criteria (optional)" });
  if (brief === undefined) return;
  const epic = await ctx.host.writable().createEpic({ title: title.trim(), brief: brief.trim(), priority: 'P2' }, ctx.host.actor);
  await ctx.host.refresh();
  void vscode.window.showInformationMessage(`Created ${epic.id} (${epic.complexity}). Next: propose a plan for it.`);
}

export async function proposePlan(ctx: CommandContext, row?: Row): Promise<void> {
  const epicId = epicOf(ctx, row);
  const planPath = await pickPlanFile(ctx, `Propose which plan for ${epicId}?`);
  if (!planPath) return;
  const source = loadPlanSource(ctx.host.actor.worktree, planPath);
  const body = readFileSync(`${ctx.host.actor.worktree}/${planPath}`, 'utf8');
  const r = await ctx.host.writable().proposePlan(epicId, { ...source, body }, ctx.host.actor);
  await ctx.host.refresh();
  ctx.openApproval(r.epic_id);
}

export function reviewPlan(ctx: CommandContext, row?: Row): void {
  ctx.openApproval(epicOf(ctx, row));
}

export async function startEpic(ctx: CommandContext, row?: Row): Promise<void> {
  const epicId = epicOf(ctx, row);
  const plan = ctx.host.snapshot?.plans.find((p) => p.epic_id === epicId);
  if (!plan) throw new UsageError('no_approved_plan', `${epicId} has no approved plan`);
  await ctx.host.writable().startEpic(epicId, loadPlanSource(ctx.host.actor.worktree, plan.plan_path), ctx.host.actor);
  await ctx.host.refresh();
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
