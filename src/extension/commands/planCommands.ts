import { closeSync, mkdirSync, openSync, readFileSync, statSync, writeSync, constants } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import * as vscode from 'vscode';
import { type EpicRow, loadPlanSource, planFileName, planTemplate, UsageError } from '../../core/index.ts';
import { EPIC_ID_SOURCE } from '../../shared/epicId.ts';
import type { Row } from '../views/treeProvider.ts';
import { refOf, type CommandContext } from './commandContext.ts';
import { createEpic } from './epicCommands.ts';
import { tellLisaPlans } from './lisaPlans.ts';
import { PLANNING_ROLE } from '../../shared/roles.ts';

const STEP_HEADING = /^ {0,3}#{2,3}[ \t]+step[ \t]+\d/im;
const NEW_PLAN = '$(new-file) New plan…';

interface PlanFile {
  readonly path: string;
  readonly title: string;
  /** The epic a template was written for ("Epic sf-a3f8." in its opening lines). */
  readonly epicId: string | null;
}

/** Markdown files of this worktree that read as plans (a "## Step N" heading), with their titles. */
async function planFiles(root: string): Promise<PlanFile[]> {
  const files = await vscode.workspace.findFiles('**/*.md', '{**/node_modules/**,**/.springfield/**,**/.git/**}', 2000);
  const found: PlanFile[] = [];
  for (const f of files) {
    const path = relative(root, f.fsPath).split(sep).join('/');
    if (path.startsWith('..')) continue;
    let text: string;
    try {
      if (statSync(f.fsPath).size > 1024 * 1024) continue;
      text = readFileSync(f.fsPath, 'utf8');
    } catch {
      continue;
    }
    if (!STEP_HEADING.test(text)) continue;
    const title = /^#[ \t]+(?:plan[ \t]*:)?[ \t]*(.+)$/im.exec(text)?.[1]?.trim() ?? '';
    found.push({ path, title, epicId: new RegExp(`^Epic (${EPIC_ID_SOURCE})\\.`, 'm').exec(text)?.[1] ?? null });
  }
  return found.sort((a, b) => a.path.localeCompare(b.path));
}

/** Epics that can take a plan: not yet approved, or sent back to Lisa. */
function epicsWithoutPlan(ctx: CommandContext): EpicRow[] {
  const s = ctx.host.snapshot;
  return (s?.epics ?? []).filter(
    (e) => (e.status === 'planned' || e.status === 'blocked') && !s?.awaitingApproval.has(e.id),
  );
}

/**
 * New plan…: writes a plan for an epic from the template (title and brief), opens it in the
 * editor and offers to propose it. Without an epic at hand it asks for one, or creates one.
 */
export async function newPlan(ctx: CommandContext, row?: Row): Promise<string | undefined> {
  let epicId = refOf(ctx, row)?.epicId;
  if (!epicId) {
    const candidates = epicsWithoutPlan(ctx);
    const create = { label: '$(add) Create epic…', description: 'a new epic, then its plan', epic: undefined };
    const pick =
      candidates.length === 0
        ? create
        : await vscode.window.showQuickPick(
            [
              ...candidates.map((e) => ({
                label: `${e.id}  ${e.title}`,
                description: e.status === 'blocked' ? 'blocked: needs a new plan' : 'no plan yet',
                epic: e,
              })),
              create,
            ],
            { title: 'New plan for which epic?' },
          );
    if (!pick) return undefined;
    epicId = pick.epic?.id ?? (await createEpic(ctx, { offerPlan: false }))?.id;
    if (!epicId) return undefined;
  }
  const epic = await ctx.host.writable().getEpic(epicId);
  const who = await whoWrites(ctx, epic);
  if (who === undefined) return undefined;
  if (who === PLANNING_ROLE) {
    await askLisa(ctx, epic);
    return undefined;
  }
  const root = ctx.host.actor.worktree;
  const planPath = freeName(root, planFileName(epic));
  const abs = join(root, planPath);
  mkdirSync(dirname(abs), { recursive: true });
  // A fresh file only: never over an existing plan, never through a planted symlink.
  const fd = openSync(abs, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o644);
  try {
    writeSync(fd, planTemplate(epic));
  } finally {
    closeSync(fd);
  }
  const editor = await vscode.window.showTextDocument(vscode.Uri.file(abs));
  const line = editor.document
    .getText()
    .split('\n')
    .findIndex((l) => l.startsWith('## Step 1:'));
  if (line >= 0)
    editor.selection = new vscode.Selection(line, 11, line, editor.document.lineAt(line).text.indexOf(' {#'));
  void vscode.window
    .showInformationMessage(
      `Wrote ${planPath} for ${epic.id} from a template. Rewrite its steps as the real work, then propose it.`,
      'Propose plan',
    )
    .then((choice) => {
      if (choice) void vscode.commands.executeCommand('springfield.epic.proposePlan', { id: `epic:${epic.id}` });
    });
  return planPath;
}

/**
 * New plan…'s first question: write the plan yourself (a template opens), or ask Lisa (the
 * scheduler starts her; her plan comes back for approval). Lisa comes first once an agent plays her.
 */
async function whoWrites(ctx: CommandContext, epic: EpicRow): Promise<'me' | typeof PLANNING_ROLE | undefined> {
  const state = ctx.scheduler?.();
  const staffed = state?.roles.includes(PLANNING_ROLE) ?? false;
  const me = {
    label: '$(edit) Write it myself',
    description: "a template opens with the epic's brief; propose it when it is ready",
    who: 'me' as const,
  };
  const lisa = {
    label: '$(hubot) Ask Lisa to write it',
    description: !staffed
      ? 'no agent plays Lisa yet: Configure agents… first'
      : state?.running
        ? 'the scheduler starts her now; her plan comes back for your approval'
        : 'the scheduler starts her; her plan comes back for your approval',
    who: PLANNING_ROLE,
  };
  const pick = await vscode.window.showQuickPick(staffed && epic.planner !== 'person' ? [lisa, me] : [me, lisa], {
    title: `Plan for “${epic.title}”: who writes it?`,
  });
  return pick?.who;
}

/**
 * Ask Lisa to write it: the epic becomes Lisa's to plan (it was the person's, if they had said they
 * would write it), and the scheduler plans it — the one running here on its next pass; otherwise the
 * person is offered to start it, or to configure an agent for Lisa first. Nothing runs unasked.
 */
async function askLisa(ctx: CommandContext, epic: EpicRow): Promise<void> {
  if (epic.planner !== PLANNING_ROLE) await ctx.host.writable().setPlanner(epic.id, PLANNING_ROLE, ctx.host.actor);
  await ctx.host.refresh();
  await tellLisaPlans(ctx, epic, '');
}

/** `plans/x.md`, else `plans/x-2.md`, … : a name no file has yet. */
function freeName(root: string, wanted: string): string {
  for (let n = 1; ; n++) {
    const name = n === 1 ? wanted : wanted.replace(/\.md$/, `-${n}.md`);
    try {
      statSync(join(root, name));
    } catch {
      return name;
    }
  }
}

/**
 * Asks for a plan file of this worktree: plans only (a "## Step" heading), `preferred` first, and
 * "New plan…" at the top. Returns a repository-relative path, NEW_PLAN, or undefined when cancelled.
 */
async function pickPlanFile(
  ctx: CommandContext,
  title: string,
  preferred: (f: PlanFile) => boolean,
): Promise<string | undefined> {
  const files = await planFiles(ctx.host.actor.worktree);
  const mine = files.filter(preferred);
  const others = files.filter((f) => !preferred(f));
  const item = (f: PlanFile, note?: string) => ({
    label: f.path,
    description: [note, f.title].filter(Boolean).join(' · ') || undefined,
  });
  const items: vscode.QuickPickItem[] = [
    ...mine.map((f) => item(f, "this epic's plan")),
    {
      label: NEW_PLAN,
      description: files.length === 0 ? 'no plan file in this repository yet' : 'write one from a template',
    },
    ...(others.length
      ? [{ label: 'Plan files', kind: vscode.QuickPickItemKind.Separator }, ...others.map((f) => item(f))]
      : []),
  ];
  const pick = await vscode.window.showQuickPick(items, {
    title,
    placeHolder: 'A markdown plan with "## Step 1: Title" headings',
  });
  return pick?.label;
}

/** Initialise: record a plan without an epic; with no plan file yet, New plan… writes one. */
export async function initHere(ctx: CommandContext): Promise<void> {
  const planPath = await pickPlanFile(ctx, 'Initialise Springfield with which plan?', () => false);
  if (!planPath) return;
  if (planPath === NEW_PLAN) {
    await newPlan(ctx);
    return;
  }
  const r = await ctx.host.writable().initPlan(loadPlanSource(ctx.host.actor.worktree, planPath), ctx.host.actor);
  await ctx.host.refresh();
  void vscode.window.showInformationMessage(
    r.already_initialized
      ? `${planPath} was already initialised.`
      : `Initialised ${planPath}: ${r.steps_created} steps, ${r.checklist_items_created} items.`,
  );
}

/** Propose plan…: the epic's own plan comes first (the last one proposed, or the one New plan… wrote). */
export async function proposePlan(ctx: CommandContext, row?: Row): Promise<void> {
  const epicId = refOf(ctx, row)?.epicId;
  if (!epicId) throw new UsageError('no_epic', 'pick an epic in the Springfield tree first');
  const store = ctx.host.writable();
  const [epic, versions] = await Promise.all([store.getEpic(epicId), store.planVersions(epicId)]);
  const last = versions.at(-1)?.plan_path;
  const named = planFileName(epic);
  const planPath = await pickPlanFile(
    ctx,
    `Propose which plan for ${epicId} (${epic.title})?`,
    (f) => f.path === last || f.epicId === epicId || (f.path === named && f.epicId === null),
  );
  if (!planPath) return;
  if (planPath === NEW_PLAN) {
    await newPlan(ctx, row);
    return;
  }
  const abs = join(ctx.host.actor.worktree, planPath);
  await vscode.workspace.textDocuments.find((d) => d.uri.fsPath === abs && d.isDirty)?.save();
  const source = loadPlanSource(ctx.host.actor.worktree, planPath);
  const r = await store.proposePlan(epicId, { ...source, body: readFileSync(abs, 'utf8') }, ctx.host.actor);
  await ctx.host.refresh();
  ctx.openApproval(r.epic_id);
}
