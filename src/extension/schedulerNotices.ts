import * as vscode from 'vscode';
import type { CommandContext } from './commands/commandContext.ts';
import { Disposable } from './lifecycle.ts';
import type { Snapshot } from './model/snapshot.ts';
import type { EditorScheduler } from './editorScheduler.ts';
import type { StoreHost } from './storeHost.ts';

interface Notice {
  readonly key: string;
  readonly epicId: string;
  readonly text: string;
  readonly action: 'Review plan' | 'Open dashboard' | 'Show signals';
}

/**
 * While the scheduler runs in this window, tells the person when something needs them or is
 * finished: a plan an agent proposed waits for approval, a review waits for a decision, an epic is
 * done. Each once; what was already so when the scheduler started is not news.
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
      void vscode.window.showInformationMessage(n.text, n.action).then((choice) => {
        if (choice === 'Review plan') this.ctx.openApproval(n.epicId);
        else if (choice === 'Open dashboard') this.ctx.openDashboard();
        else if (choice === 'Show signals') void vscode.commands.executeCommand('springfield.signals.focus');
      });
    }
  }
}

/** Everything that would be news, keyed so each is told once. */
function notices(s: Snapshot | undefined): Notice[] {
  if (!s) return [];
  const title = (id: string) => s.epics.find((e) => e.id === id)?.title ?? '';
  const out: Notice[] = [];
  for (const [epicId, v] of s.awaitingApproval) {
    out.push({
      key: `plan:${epicId}:${v.version}`,
      epicId,
      action: 'Review plan',
      text: `Springfield: a plan for ${epicId} “${title(epicId)}” (version ${v.version}) waits for your approval.`,
    });
  }
  for (const sig of s.signals.filter((x) => x.status === 'awaiting_person')) {
    out.push({
      key: `signal:${sig.id}`,
      epicId: sig.epic_id,
      action: 'Show signals',
      text: `Springfield: Bart's review of ${sig.epic_id} “${title(sig.epic_id)}” waits for your decision: ${sig.summary}`,
    });
  }
  for (const e of s.epics.filter((x) => x.status === 'done')) {
    out.push({
      key: `done:${e.id}`,
      epicId: e.id,
      action: 'Open dashboard',
      text: `Springfield: ${e.id} “${e.title}” is done: reviewed and merged.`,
    });
  }
  return out;
}
