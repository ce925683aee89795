import { existsSync } from 'node:fs';
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
  }
}

/** Opens `path` as a repository in the Source Control view (the git extension's own command). */
export async function addToSourceControl(path: string): Promise<void> {
  await vscode.commands.executeCommand('git.openRepository', path);
}
