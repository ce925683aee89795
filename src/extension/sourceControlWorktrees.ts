import { existsSync, realpathSync } from 'node:fs';
import * as vscode from 'vscode';
import { Disposable } from './lifecycle.ts';
import type { Snapshot } from './model/snapshot.ts';
import { sourceControlCandidates } from './model/worktreeItems.ts';
import type { StoreHost } from './storeHost.ts';
import { userSetting } from './userSettings.ts';

/**
 * While an epic is worked on, its worktree shows in the Source Control view (docs/worktrees.md,
 * "From the editor"): each is added once per window, through the built-in git extension, behind
 * `springfield.worktrees.addToSourceControl`. A failure (git disabled, the folder gone) stays quiet:
 * this is a convenience, and one toast per epic would be noise.
 */
export class SourceControlWorktrees extends Disposable {
  private readonly added = new Set<string>();
  private readonly host: StoreHost;

  constructor(host: StoreHost) {
    super();
    this.host = host;
    this.register(host.onDidChange((s) => void this.update(s)));
  }

  private async update(s: Snapshot): Promise<void> {
    if (!vscode.workspace.isTrusted || !userSetting<boolean>('worktrees.addToSourceControl', true)) return;
    for (const path of sourceControlCandidates(s.epics, this.host.location?.mainRoot ?? null, this.added, existsSync)) {
      this.added.add(path);
      await addToSourceControl(path).catch(() => undefined);
    }
    // A worktree removed by another process (the CLI's scheduler, prune): closed once the store forgets it.
    const recorded = new Set(s.epics.flatMap((e) => (e.worktree_path && e.status !== 'done' ? [e.worktree_path] : [])));
    for (const path of [...this.added].filter((p) => !recorded.has(p))) {
      this.added.delete(path);
      await removeFromSourceControl(path).catch(() => undefined);
    }
  }
}

/** The part of the built-in git extension's API used here. */
interface GitApi {
  getRepository(uri: vscode.Uri): { readonly rootUri: vscode.Uri } | null;
}

/**
 * Closes the repository at `path` in the Source Control view, if the git extension has it open: done
 * before Springfield deletes a worktree, since an open repository whose folder vanishes makes the git
 * extension fail ("Repository not initialized"). Only that exact repository is closed, never one around it.
 */
export async function removeFromSourceControl(path: string): Promise<void> {
  const git = vscode.extensions.getExtension<{ getAPI(version: 1): GitApi }>('vscode.git');
  if (!git?.isActive) return;
  const uri = vscode.Uri.file(path);
  const root = git.exports.getAPI(1).getRepository(uri)?.rootUri.fsPath;
  const real = (p: string) => (existsSync(p) ? realpathSync(p) : p);
  if (!root || real(root) !== real(path)) return;
  await vscode.commands.executeCommand('git.close', uri);
}

/** Opens `path` as a repository in the Source Control view (the git extension's own command). */
export async function addToSourceControl(path: string): Promise<void> {
  await vscode.commands.executeCommand('git.openRepository', path);
}
