import * as vscode from 'vscode';
import { Disposable } from './lifecycle.ts';
import type { Snapshot } from './model/snapshot.ts';
import { leaseLeft } from './views/viewText.ts';

/** `$(sync~spin) 2 agents · 3 claimed · lease 4m`, warning colour under ten minutes; opens the dashboard. */
export class StatusBar extends Disposable {
  private readonly item = this.register(
    vscode.window.createStatusBarItem('springfield.status', vscode.StatusBarAlignment.Left, 50),
  );
  private snapshot: Snapshot | undefined;

  constructor() {
    super();
    this.item.name = 'Springfield';
    this.item.command = 'springfield.openDashboard';
  }

  update(s: Snapshot): void {
    this.snapshot = s;
    this.tick(new Date());
  }

  /** Redraws for `now`; returns the milliseconds until the lease text next changes (Infinity without a lease). */
  tick(now: Date): number {
    const s = this.snapshot;
    if (!s) return Infinity;
    const agents = s.runs.filter((r) => r.status === 'running').length;
    const live = s.plans.flatMap((p) => p.steps).filter((st) => st.status === 'claimed' || st.status === 'in_progress');
    const nearest = live
      .map((st) => st.lease_expires_at)
      .filter((x): x is string => x !== null)
      .sort()[0];
    const lease = nearest ? leaseLeft(nearest, now) : undefined;
    const left = nearest ? Date.parse(nearest) - now.getTime() : undefined;
    const parts = [`${agents} agent${agents === 1 ? '' : 's'}`, `${live.length} claimed`];
    if (lease)
      parts.push(left !== undefined && left >= 0 ? `lease ${lease.text.replace(/ left$/, '')}` : 'a lease expired');
    this.item.text = `$(${agents > 0 ? 'sync~spin' : 'checklist'}) ${parts.join(' · ')}`;
    this.item.tooltip =
      'Springfield: running agents, claimed steps and the nearest lease expiry. Click for the dashboard.';
    this.item.backgroundColor =
      left !== undefined && left < 10 * 60_000 ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
    this.item.show();
    return lease && left !== undefined && left >= 0 ? lease.nextMs : Infinity;
  }
}
