import * as vscode from 'vscode';
import { Disposable } from './lifecycle.ts';
import type { Snapshot } from './model/snapshot.ts';
import { isCostBlockReason, isRetryable } from '../core/index.ts';

const KEY = 'springfield.notifiedBlocks';

/**
 * Tells the person once when an epic is blocked by a failing agent or a drifted plan (not on every
 * refresh): each block is remembered by epic and time in the workspace state, so a reload does not
 * repeat it and a block that happened while the window was closed is told once when it opens.
 */
export class BlockNotifier extends Disposable {
  private readonly memento: vscode.Memento;
  private readonly retry: (epicId: string) => Promise<void>;
  private readonly openDashboard: () => void;
  private readonly raiseBudget: (epicId: string) => Promise<void>;

  constructor(
    memento: vscode.Memento,
    retry: (epicId: string) => Promise<void>,
    openDashboard: () => void,
    raiseBudget: (epicId: string) => Promise<void> = retry,
  ) {
    super();
    this.memento = memento;
    this.retry = retry;
    this.openDashboard = openDashboard;
    this.raiseBudget = raiseBudget;
  }

  update(s: Snapshot): void {
    const told = new Set(this.memento.get<string[]>(KEY, []));
    const current = s.epics.filter(isRetryable).map((e) => ({ e, key: `${e.id}|${e.updated_at}` }));
    const fresh = current.filter(({ key }) => !told.has(key));
    if (fresh.length === 0 && told.size === current.length) return;
    // Only blocks that still stand are remembered, so the list never grows past the blocked epics.
    void this.memento.update(
      KEY,
      current.map(({ key }) => key),
    );
    for (const { e } of fresh) void this.tell(e.id, e.title, e.status_reason ?? 'blocked');
  }

  private async tell(epicId: string, title: string, reason: string): Promise<void> {
    if (isCostBlockReason(reason)) {
      // A retry alone is refused while the budget is still spent (docs/budgets.md): the budget first.
      const paused = await vscode.window.showWarningMessage(
        `Springfield: ${epicId} "${title}" is paused — its budget is spent (${reason.replace(/^budget_exhausted: /, '')}). Nothing runs for it until you raise its budget and retry.`,
        'Raise budget…',
        'Open dashboard',
      );
      if (paused === 'Raise budget…') await this.raiseBudget(epicId);
      else if (paused === 'Open dashboard') this.openDashboard();
      return;
    }
    const choice = await vscode.window.showWarningMessage(
      `Springfield: ${epicId} "${title}" is blocked — ${reason.replace(/^(agent_failed|plan_drift|merge_failed): /, '')}. Nothing runs for it until you retry.`,
      'Retry',
      'Open dashboard',
    );
    if (choice === 'Retry') await this.retry(epicId);
    else if (choice === 'Open dashboard') this.openDashboard();
  }
}
