import * as vscode from 'vscode';
import { Disposable } from './lifecycle.ts';
import type { RoleLimit } from '../core/index.ts';
import type { Snapshot } from './model/snapshot.ts';
import { limitStatus } from './model/usageLimits.ts';
import { leaseLeft } from './views/viewText.ts';

/** `$(sync~spin) 2 agents · 3 claimed · lease 4m`, warning colour under ten minutes; opens the dashboard. */
export class StatusBar extends Disposable {
  private readonly item = this.register(
    vscode.window.createStatusBarItem('springfield.status', vscode.StatusBarAlignment.Left, 50),
  );
  /** "Claude limited until 14:05" while a preset the roles use is limited on this host. */
  private readonly limitItem = this.register(
    vscode.window.createStatusBarItem('springfield.limits', vscode.StatusBarAlignment.Left, 50),
  );
  private snapshot: Snapshot | undefined;
  private readonly limits: (now: Date) => readonly RoleLimit[];

  constructor(limits: (now: Date) => readonly RoleLimit[] = () => []) {
    super();
    this.limits = limits;
    this.item.name = 'Springfield';
    this.item.command = 'springfield.openDashboard';
    this.limitItem.name = 'Springfield usage limits';
    this.limitItem.command = 'springfield.agents.configure';
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
    const next = lease && left !== undefined && left >= 0 ? lease.nextMs : Infinity;
    return Math.min(next, this.showLimits(now));
  }

  /** Shows or hides the limit item; returns the milliseconds until its text changes (a reset). */
  private showLimits(now: Date): number {
    const status = limitStatus(this.limits(now), now);
    if (!status) {
      this.limitItem.hide();
      return Infinity;
    }
    this.limitItem.text = `$(watch) ${status.text}`;
    this.limitItem.tooltip = `Springfield: usage limits on this host\n${status.tooltip}\nClick to configure agents and their fallbacks.`;
    this.limitItem.backgroundColor = status.stopped
      ? new vscode.ThemeColor('statusBarItem.warningBackground')
      : undefined;
    this.limitItem.show();
    return Date.parse(status.until) - now.getTime() + 1;
  }
}
