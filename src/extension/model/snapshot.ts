import {
  type Complexity,
  type EpicRow,
  type PlanView,
  type RunView,
  runningApp,
  type SignalView,
  type Store,
} from '../../core/index.ts';
import { roleSpec } from '../../shared/roles.ts';

/** Everything the views show, read in one go from the store (no vscode here: tested in plain Node). */
export interface Snapshot {
  readonly now: Date;
  /** The worktree this window acts for (holder identity). */
  readonly worktree: string;
  readonly epics: readonly EpicRow[];
  readonly plans: readonly PlanView[];
  readonly signals: readonly SignalView[];
  readonly runs: readonly RunView[];
  /** Epic id → the latest proposed plan version waiting for approval. */
  readonly awaitingApproval: ReadonlyMap<string, { version: number; plan_path: string; created_at: string }>;
  /** Epics whose latest plan version was sent back with feedback: Lisa's move. */
  readonly changesRequested: ReadonlySet<string>;
  /** Epics whose app runs in their worktree now (`springfield app`), so a row offers Stop app, not Run app. */
  readonly appsRunning: ReadonlySet<string>;
  /** The config's `"reviewedByPerson"`: complexities whose built epics wait for the person's Review changes. */
  readonly reviewedByPerson: readonly Complexity[];
}

export async function loadSnapshot(
  store: Store,
  worktree: string,
  now = new Date(),
  reviewedByPerson: readonly Complexity[] = [],
): Promise<Snapshot> {
  const [epics, plans, signals, runs] = await Promise.all([
    store.listEpics(),
    store.showPlans(),
    store.signals(),
    store.runs({ limit: 1000 }),
  ]);
  const awaitingApproval = new Map<string, { version: number; plan_path: string; created_at: string }>();
  const changesRequested = new Set<string>();
  for (const epic of epics) {
    if (epic.status !== 'planned' && epic.status !== 'blocked') continue;
    const versions = await store.planVersions(epic.id);
    const proposed = versions.filter((v) => v.status === 'proposed').at(-1);
    if (proposed)
      awaitingApproval.set(epic.id, {
        version: proposed.version,
        plan_path: proposed.plan_path,
        created_at: proposed.created_at,
      });
    else if (versions.at(-1)?.status === 'changes_requested') changesRequested.add(epic.id);
  }
  const appsRunning = runningApps(epics);
  return {
    now,
    worktree,
    epics,
    plans,
    signals,
    runs,
    awaitingApproval,
    changesRequested,
    appsRunning,
    reviewedByPerson,
  };
}

/** How far along the Get started walkthrough this repository is (its steps tick through context keys). */
export function walkthroughProgress(s: Snapshot): {
  epic: boolean;
  proposed: boolean;
  approved: boolean;
  started: boolean;
  loosePlan: boolean;
  agentsRan: boolean;
} {
  const approved =
    s.plans.some((p) => p.epic_id !== null) || s.epics.some((e) => e.status !== 'planned' && e.status !== 'deferred');
  return {
    epic: s.epics.length > 0,
    proposed: approved || s.awaitingApproval.size > 0 || s.changesRequested.size > 0,
    approved,
    started:
      s.epics.some((e) => e.status !== 'planned' && e.status !== 'ready' && e.status !== 'deferred') ||
      s.plans.some((p) => p.steps.some((st) => st.status !== 'pending')),
    loosePlan: s.plans.some((p) => p.epic_id === null),
    agentsRan: s.runs.some((r) => roleSpec(r.role)?.kind !== 'scheduler'),
  };
}

/** The epics whose app runs in their worktree now (`springfield app`; the record is read, not the store). */
export function runningApps(epics: readonly EpicRow[]): ReadonlySet<string> {
  return new Set(
    epics.filter((e) => e.worktree_path && e.status !== 'done' && runningApp(e.worktree_path)).map((e) => e.id),
  );
}

/** Whether the same epics' apps run in both (none started or stopped in between). */
export function sameApps(before: ReadonlySet<string>, now: ReadonlySet<string>): boolean {
  return before.size === now.size && [...before].every((id) => now.has(id));
}
