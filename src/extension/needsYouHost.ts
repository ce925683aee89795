import * as vscode from 'vscode';
import { Disposable } from './lifecycle.ts';
import { needsYou, NOTHING, type NeedsYou, type SchedulerState } from './model/needsYou.ts';
import type { Snapshot } from './model/snapshot.ts';
import type { ConflictsAhead } from './model/conflictWatch.ts';

/**
 * Keeps the Needs you list current (each new snapshot, each scheduler pass) and shows its count
 * where a person looks: the Epics view's badge (and so the activity bar's) and a status bar item
 * that opens the list. The tree row and the dashboard read `current`.
 */
export class NeedsYouHost extends Disposable {
  private readonly item = this.register(
    vscode.window.createStatusBarItem('springfield.needsYou', vscode.StatusBarAlignment.Left, 51),
  );
  private readonly changed = this.register(new vscode.EventEmitter<NeedsYou>());
  /** The list changed because the scheduler's view did (a snapshot's change is told by the store host). */
  readonly onDidChange = this.changed.event;
  private model: NeedsYou = NOTHING;
  private snapshot: Snapshot | undefined;
  private readonly view: vscode.TreeView<unknown>;
  private readonly scheduler: () => SchedulerState | undefined;
  private readonly ahead: () => ConflictsAhead;

  constructor(
    view: vscode.TreeView<unknown>,
    scheduler: () => SchedulerState | undefined,
    ahead: () => ConflictsAhead = () => new Map(),
  ) {
    super();
    this.view = view;
    this.scheduler = scheduler;
    this.ahead = ahead;
    this.item.name = 'Springfield: needs you';
    this.item.command = 'springfield.needsYou.show';
  }

  get current(): NeedsYou {
    return this.model;
  }

  /** A new snapshot: recomputed before the views redraw from it. */
  update(s: Snapshot): void {
    this.snapshot = s;
    this.compute();
  }

  /** The scheduler passed, started or stopped, or the conflicts ahead changed: what it waits for may have changed. */
  schedulerChanged(): void {
    if (!this.snapshot) return;
    const key = (m: NeedsYou) => JSON.stringify({ ...m, held: [...m.held] });
    const before = key(this.model);
    this.compute();
    if (key(this.model) !== before) this.changed.fire(this.model);
  }

  private compute(): void {
    if (!this.snapshot) return;
    this.model = needsYou(this.snapshot, this.scheduler(), new Date(), this.ahead());
    const n = this.model.items.length;
    this.view.badge = n > 0 ? { value: n, tooltip: `${n} ${n === 1 ? 'thing needs' : 'things need'} you` } : undefined;
    if (n === 0) {
      this.item.hide();
      return;
    }
    this.item.text = `$(bell-dot) ${n} need${n === 1 ? 's' : ''} you`;
    this.item.tooltip = new vscode.MarkdownString(
      `**Springfield: needs you**\n\n${this.model.items.map((i) => `- ${i.text.replace(/([\\`*_[\]<>])/g, '\\$1')}`).join('\n')}\n\nClick to show the list.`,
    );
    this.item.show();
  }
}
