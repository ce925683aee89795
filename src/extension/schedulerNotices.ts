import * as vscode from 'vscode';
import type { CommandContext } from './commands/commandContext.ts';
import { Disposable } from './lifecycle.ts';
import type { Snapshot } from './model/snapshot.ts';
import type { EditorScheduler } from './editorScheduler.ts';
import type { StoreHost } from './storeHost.ts';

interface Notice {
  readonly key: string;
  readonly text: string;
}

/**
 * While the scheduler runs in this window, tells the person when an epic is done (reviewed and
 * merged). Once each; what was already done when the scheduler started is not news. What waits for
 * the person (a plan to approve, a review to decide) is told by NeedsYouNotifier, once per item.
 */
export class SchedulerNotices extends Disposable {
  private seen: Set<string> | undefined;
  private readonly ctx: CommandContext;

  constructor(host: StoreHost, scheduler: EditorScheduler, ctx: CommandContext) {
    super();
    this.ctx = ctx;
    this.register(
      scheduler.onDidChangeRunning((running) => {
        this.seen = running ? new Set(notices(host.snapshot).map((n) => n.key)) : undefined;
      }),
    );
    this.register(host.onDidChange((s) => this.update(s)));
  }

  private update(s: Snapshot): void {
    if (!this.seen) return;
    for (const n of notices(s)) {
      if (this.seen.has(n.key)) continue;
      this.seen.add(n.key);
      void vscode.window.showInformationMessage(n.text, 'Open dashboard').then((choice) => {
        if (choice === 'Open dashboard') this.ctx.openDashboard();
      });
    }
  }
}

/** Every epic done, keyed so each is told once. */
function notices(s: Snapshot | undefined): Notice[] {
  return (s?.epics ?? [])
    .filter((e) => e.status === 'done')
    .map((e) => ({ key: `done:${e.id}`, text: `Springfield: ${e.id} “${e.title}” is done: reviewed and merged.` }));
}
