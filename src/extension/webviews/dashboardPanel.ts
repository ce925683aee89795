import type * as vscode from 'vscode';
import type { DashboardData, FromWebview } from '../../protocol/messages.ts';
import { configPathFor, loadRoleCommands } from '../../core/index.ts';
import type { ConflictsAhead } from '../model/conflictWatch.ts';
import type { NeedsYou } from '../model/needsYou.ts';
import type { StoreHost } from '../storeHost.ts';
import { dashboardData } from './dashboardData.ts';
import { PanelHost } from './panelHost.ts';

/** What the dashboard's links do in the editor. */
export interface DashboardActions {
  openStep(planPath: string, anchor: string): void;
  /** Shows the epic in the Epics tree, or opens its plan (the approval panel while a plan waits). */
  openEpic(epicId: string, target: 'tree' | 'plan'): void;
  /** Lifts an agent_failed or plan_drift block (the card's Retry). */
  retryEpic(epicId: string): Promise<void>;
  /** What waits for the person now. */
  needsYou(): NeedsYou | undefined;
  /** Per epic waiting on a preset's usage limit, what its card says. */
  limitWaits(): ReadonlyMap<string, string>;
  /** Per epic under way, the conflicts its branch would meet. */
  conflictsAhead(): ConflictsAhead;
  /** A Needs you item's button, by the item's key. */
  actOnNeed(key: string): Promise<void>;
}

/** The live dashboard: figures, epics, the selected plan's dependency graph, leases, runs, evidence, timeline. */
export class DashboardPanel extends PanelHost {
  static readonly viewType = 'springfield.dashboard';
  private readonly host: StoreHost;
  private selected: string | null = null;
  private readonly actions: DashboardActions;

  constructor(panel: vscode.WebviewPanel, extensionUri: vscode.Uri, host: StoreHost, actions: DashboardActions) {
    super(panel, extensionUri, 'dashboard');
    this.host = host;
    this.actions = actions;
    this.register(host.onDidChange(() => void this.send()));
  }

  reveal(): void {
    this.panel.reveal();
  }

  /** Sends the data again (the Needs you list changed without a new snapshot). */
  refresh(): void {
    void this.send();
  }

  protected onReady(): void {
    void this.send();
  }

  private async send(): Promise<void> {
    if (!this.host.snapshot) return;
    const data: DashboardData = await dashboardData(
      this.host.writable(),
      this.host.snapshot,
      this.selected,
      this.actions.needsYou(),
      {
        ahead: this.actions.conflictsAhead(),
        limitWaits: this.actions.limitWaits(),
        budget: this.host.dbPath ? loadRoleCommands(configPathFor(this.host.dbPath)).budget : undefined,
      },
    );
    this.post({ type: 'dashboard', data });
  }

  protected async handle(message: Exclude<FromWebview, { type: 'ready' }>): Promise<void> {
    if (message.type === 'selectPlan') {
      this.selected = message.planPath;
      await this.send();
    } else if (message.type === 'openStep') {
      this.actions.openStep(message.planPath, message.anchor);
    } else if (message.type === 'openEpic') {
      this.actions.openEpic(message.epicId, message.target);
    } else if (message.type === 'retryEpic') {
      await this.actions.retryEpic(message.epicId);
    } else if (message.type === 'needsYou') {
      await this.actions.actOnNeed(message.key);
    }
  }
}
