import { existsSync } from 'node:fs';
import * as vscode from 'vscode';
import {
  configPathFor,
  type EpicRow,
  loadRoleCommands,
  pruneWorktrees,
  RefusedError,
  requireAllowed,
  springfieldWorktrees,
  type SpringfieldWorktree,
  timeoutFor,
  trustTargetFor,
  UsageError,
} from '../../core/index.ts';
import { runConfig } from '../editorScheduler.ts';
import { Disposable } from '../lifecycle.ts';
import {
  pruneSummary,
  type WorktreeAction,
  worktreeActions,
  worktreeItem,
  type WorktreeItem,
  worktreeProblem,
} from '../model/worktreeItems.ts';
import { addToSourceControl, removeFromSourceControl, SourceControlWorktrees } from '../sourceControlWorktrees.ts';
import { userSetting } from '../userSettings.ts';
import type { Row } from '../views/treeProvider.ts';
import { AppRunner } from './appCommands.ts';
import { refOf, type CommandContext } from './commandContext.ts';
import { guarded } from './guard.ts';
import { SETUP_ROLE } from '../../shared/roles.ts';

export interface WorktreeCommandOptions {
  /** The CLI this extension ships (`dist/cli.cjs`), run for an epic's app. */
  readonly cliPath: string;
  /** The folder holding the `springfield` wrapper, put on the app terminal's PATH. */
  readonly binDir: string;
}

type WorktreePick = vscode.QuickPickItem & { readonly worktree?: SpringfieldWorktree; readonly prune?: true };

/**
 * Finding, running and cleaning up worktrees from the editor (docs/worktrees.md, "From the editor"):
 * Open worktree… and Run app / Stop app on an epic, Worktrees… for every worktree Springfield made,
 * and the epic's worktree in the Source Control view while it is worked on.
 */
export class WorktreeCommands extends Disposable {
  private readonly ctx: CommandContext;
  private readonly apps: AppRunner;

  constructor(ctx: CommandContext, o: WorktreeCommandOptions) {
    super();
    this.ctx = ctx;
    this.apps = new AppRunner(ctx.host, o.cliPath, o.binDir);
    this.register(new SourceControlWorktrees(ctx.host));
    // An app's terminal closed: its app ended, so its epic's row offers Run app again.
    this.register(
      vscode.window.onDidCloseTerminal((t) => {
        if (t.name.startsWith('App · ')) void ctx.host.refresh();
      }),
    );
    const commands: Record<string, (row?: Row) => Promise<void>> = {
      'springfield.epic.openWorktree': (row) => this.openEpicWorktree(row),
      'springfield.epic.runApp': (row) => this.runApp(row),
      'springfield.epic.stopApp': (row) => this.stopApp(row),
      'springfield.worktrees': () => this.showWorktrees(),
    };
    for (const [id, fn] of Object.entries(commands)) this.register(vscode.commands.registerCommand(id, guarded(fn)));
  }

  private get mainRoot(): string | null {
    return this.ctx.host.location?.mainRoot ?? null;
  }

  /** Open worktree…: where to open the epic's worktree, or find it. */
  private async openEpicWorktree(row?: Row): Promise<void> {
    const target = await this.epicWorktree(row, 'Open the worktree of which epic?');
    if (!target) return;
    await this.chooseAction(target.epic.title || target.epic.id, target.worktree, null);
  }

  private async runApp(row?: Row): Promise<void> {
    const target = await this.epicWorktree(row, "Run which epic's app?");
    if (target) await this.apps.run(target.epic, target.worktree);
  }

  private async stopApp(row?: Row): Promise<void> {
    const target = await this.epicWorktree(row, "Stop which epic's app?");
    if (target) await this.apps.stop(target.epic, target.worktree);
  }

  /** Worktrees…: every worktree Springfield made, its facts, and what can be done with it; Prune worktrees… last. */
  private async showWorktrees(): Promise<void> {
    const pick = vscode.window.createQuickPick<WorktreePick>();
    pick.title = 'Worktrees made by Springfield';
    pick.placeholder = 'Reading worktrees…';
    pick.matchOnDescription = true;
    pick.matchOnDetail = true;
    pick.busy = true;
    pick.show();
    const chosen = new Promise<WorktreePick | undefined>((resolve) => {
      pick.onDidAccept(() => resolve(pick.selectedItems[0]));
      pick.onDidHide(() => resolve(undefined));
    });
    try {
      const items: WorktreeItem[] = (await this.list()).map(worktreeItem);
      pick.items = [
        ...items,
        { label: '', kind: vscode.QuickPickItemKind.Separator },
        {
          label: '$(trash) Prune worktrees…',
          description: 'remove those whose epic is done, deferred or gone',
          prune: true,
        },
      ];
      pick.placeholder =
        items.length === 0 ? 'No worktrees made by Springfield yet' : 'Pick a worktree to open, find, or run its app';
      pick.busy = false;
      const choice = await chosen;
      if (choice?.prune) await this.prune();
      else if (choice?.worktree)
        await this.chooseAction(
          choice.worktree.title ?? choice.worktree.epic_id,
          choice.worktree.path,
          choice.worktree,
        );
    } finally {
      pick.dispose();
    }
  }

  /** The actions on one worktree (worktreeActions), then does the one picked. */
  private async chooseAction(name: string, path: string, w: SpringfieldWorktree | null): Promise<void> {
    const items = worktreeActions(w, process.platform);
    const picked = await vscode.window.showQuickPick(items, {
      title: `${name} — ${path}`,
      placeHolder:
        items.length > 4
          ? 'Open the worktree, find it, add it to Source Control, or its app'
          : 'Open the worktree, find it, or add it to Source Control',
    });
    if (picked) await this.act(picked.action, path, w);
  }

  private async act(action: WorktreeAction, path: string, w: SpringfieldWorktree | null): Promise<void> {
    if (!existsSync(path)) throw new RefusedError('no_epic_worktree', `${path} is gone`);
    const uri = vscode.Uri.file(path);
    switch (action) {
      case 'openNewWindow':
      case 'openHere':
        await vscode.commands.executeCommand('vscode.openFolder', uri, { forceNewWindow: action === 'openNewWindow' });
        return;
      case 'reveal':
        await vscode.commands.executeCommand('revealFileInOS', uri);
        return;
      case 'sourceControl':
        try {
          await addToSourceControl(path);
        } catch {
          throw new Error(
            `could not add ${path} to Source Control: is the built-in Git extension enabled (git.enabled)?`,
          );
        }
        await vscode.commands.executeCommand('workbench.view.scm');
        return;
      case 'runApp':
      case 'stopApp': {
        const epic = w && (await this.epicRow(w.epic_id));
        if (!epic) return;
        if (action === 'runApp') await this.apps.run(epic, path);
        else await this.apps.stop(epic, path);
      }
    }
  }

  /** Prune worktrees…: what would go and what stays in a modal, then the prune itself (archive commands need the config allowed). */
  private async prune(): Promise<void> {
    const mainRoot = this.requireMainRoot();
    const host = this.ctx.host;
    const config = runConfig(host);
    const options = {
      force: null,
      archive: config.archive,
      archiveTimeoutMs: timeoutFor(config, SETUP_ROLE) * 1000,
      location: this.location(),
      config,
      beforeRemove: removeFromSourceControl,
    };
    const dry = await pruneWorktrees(host.writable(), mainRoot, null, { ...options, dryRun: true });
    const plan = pruneSummary(dry);
    if (dry.removed.length === 0) {
      void vscode.window.showInformationMessage(`Springfield: ${plan.headline}`, {
        modal: true,
        detail: plan.detail || 'No worktree Springfield made is left.',
      });
      return;
    }
    const refusal = this.archiveRefusal(config.archive.length > 0);
    if (refusal) {
      void vscode.window.showWarningMessage(`Springfield: cannot prune here: ${refusal}`, {
        modal: true,
        detail: `${plan.detail}\n\nNothing was removed.`,
      });
      return;
    }
    const go = await vscode.window.showWarningMessage(
      `Springfield: ${plan.headline}`,
      {
        modal: true,
        detail: `${plan.detail}\n\n${config.archive.length > 0 ? 'The archive commands run in each first; one that fails keeps its worktree. ' : ''}Each removal is recorded on its epic.`,
      },
      'Prune',
    );
    if (go !== 'Prune') return;
    const done = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: 'Springfield: pruning worktrees…' },
      () => pruneWorktrees(host.writable(), mainRoot, host.actor, { ...options, dryRun: false }),
    );
    await host.refresh();
    const report = pruneSummary(done);
    const stays =
      done.kept.length > 0
        ? ` ${done.kept.length} stay${done.kept.length === 1 ? 's' : ''}: ${done.kept.map((k) => `${k.epic_id} (${k.reason})`).join('; ')}.`
        : '';
    const show = done.kept.some((k) => k.reason.startsWith('the archive command'))
      ? vscode.window.showWarningMessage
      : vscode.window.showInformationMessage;
    void show(`Springfield: ${report.headline}${stays}`);
  }

  /**
   * Why the archive commands may not run here, or null: they come from config.json, which runs
   * nothing until allowed (docs/trust.md), and Restricted Mode runs nothing at all.
   */
  private archiveRefusal(hasArchive: boolean): string | null {
    if (!hasArchive) return null;
    if (!vscode.workspace.isTrusted)
      return 'the archive commands run before each removal, and Restricted Mode runs no commands; trust this workspace first.';
    // Archive commands from the user's own settings need no allowance; those of config.json do.
    if (userSetting<string[][]>('worktrees.archive', []).length > 0) return null;
    const { location, dbPath } = this.ctx.host;
    if (!location || !dbPath) return null;
    try {
      requireAllowed(trustTargetFor(location, dbPath, process.env));
      return null;
    } catch (err) {
      if (err instanceof RefusedError)
        return `the archive commands of config.json run before each removal: ${err.message}.`;
      throw err;
    }
  }

  /** The epic of a clicked row, or one picked from those with a worktree; refused clearly when it has none. */
  private async epicWorktree(
    row: Row | undefined,
    question: string,
  ): Promise<{ epic: EpicRow; worktree: string } | undefined> {
    const mainRoot = this.mainRoot;
    let epicId = refOf(this.ctx, row)?.epicId;
    if (!epicId) {
      const withWorktree = (this.ctx.host.snapshot?.epics ?? []).filter(
        (e) => worktreeProblem(e, mainRoot, existsSync) === null,
      );
      if (withWorktree.length === 0)
        throw new RefusedError(
          'no_epic_worktree',
          'no epic has a worktree of its own yet: an epic gets one when it is started (Start epic, or the scheduler)',
        );
      const picked = await vscode.window.showQuickPick(
        withWorktree.map((e) => ({
          label: e.title || e.id,
          description: `${e.id} · ${e.status.replace(/_/g, ' ')}`,
          detail: e.worktree_path ?? undefined,
          epic: e,
        })),
        { title: question },
      );
      if (!picked) return undefined;
      epicId = picked.epic.id;
    }
    const epic = await this.epicRow(epicId);
    if (!epic) throw new UsageError('no_epic', `${epicId} is not in the store`);
    const problem = worktreeProblem(epic, mainRoot, existsSync);
    if (problem) throw new RefusedError('no_epic_worktree', problem);
    return { epic, worktree: epic.worktree_path as string };
  }

  private async epicRow(id: string): Promise<EpicRow | undefined> {
    return (
      this.ctx.host.snapshot?.epics.find((e) => e.id === id) ??
      (await this.ctx.host
        .writable()
        .getEpic(id)
        .catch(() => undefined))
    );
  }

  /** Where worktrees go: the user's setting, else config.json's "worktreeRoot" (as the scheduler and the CLI take it). */
  private location(): string | undefined {
    const dbPath = this.ctx.host.dbPath;
    return (
      userSetting<string>('worktrees.location', '') ||
      (dbPath ? loadRoleCommands(configPathFor(dbPath)).worktreeRoot : undefined) ||
      undefined
    );
  }

  private requireMainRoot(): string {
    const mainRoot = this.mainRoot;
    if (!mainRoot) throw new UsageError('no_worktree', 'worktrees need a repository with a main worktree');
    return mainRoot;
  }

  /** Every worktree Springfield made; none while this repository has no store yet. */
  private async list(): Promise<SpringfieldWorktree[]> {
    const mainRoot = this.requireMainRoot();
    const { dbPath, databaseUrl } = this.ctx.host;
    if (!databaseUrl && (!dbPath || !existsSync(dbPath))) return [];
    return springfieldWorktrees(this.ctx.host.writable(), mainRoot, this.location());
  }
}
