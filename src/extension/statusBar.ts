import * as vscode from 'vscode';
import { Disposable } from './lifecycle.ts';
import type { Snapshot } from './model/snapshot.ts';
import { shortDuration } from './views/format.ts';

/** `$(sync~spin) 2 agents · 3 claimed · lease 4m`, warning colour under ten minutes; opens the dashboard. */
export class StatusBar extends Disposable {
  private readonly item = this.register(vscode.window.createStatusBarItem('springfield.status', vscode.StatusBarAlignment.Left, 50));
  private snapshot: Snapshot | undefined;

  constructor() {
    super();
    this.item.name = 'Springfield';
    this.item.command = 'springfield.openDashboard';
    const timer = setInterval(() => this.render(), 30_000);
    this.register({ dispose: () => clearInterval(timer) });
  }

  update(s: Snapshot): void {
    this.snapshot = s;
    this.render();
  }

  private render(): void {
    const s = this.snapshot;
    if (!s) return;
    const agents = s.runs.filter((r) => r.status === 'running').length;
    const live = s.plans.flatMap((p) => p.steps).filter((st) => st.status === 'claimed' || st.status === 'in_progress');
    const nearest = live.map((st) => st.lease_expires_at).filter((x): x is string => x !== null).sort()[0];
    const left = nearest ? Date.parse(nearest) - Date.now() : undefined;
    const parts = [`${agents} agent${agents === 1 ? '' : 's'}`, `${live.length} claimed`];
    if (left !== undefined) parts.push(left >= 0 ? `lease ${shortDuration(left)}` : 'lease expired');
    this.item.text = `$(${agents > 0 ? 'sync~spin' : 'checklist'}) ${parts.join(' · ')}`;
    this.item.tooltip = 'Springfield: running agents, claimed steps and the nearest lease expiry. Click for the dashboard.';
    this.item.backgroundColor = left !== undefined && left < 10 * 60_000 ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
    this.item.show();
  }
}
