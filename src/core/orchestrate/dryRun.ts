/**
 * `orchestrate --dry-run`: what one pass of the scheduler would do now, from the same snapshot and
 * the same decide(), without doing any of it (no claim, no worktree, no agent, no write).
 */
import { ROLE_NAMES } from '../epics/transitions.ts';
import type { RunConfig } from '../runs/runConfig.ts';
import { decide } from '../scheduler/decide.ts';
import { MESSAGES } from '../scheduler/rules.ts';
import type { Action } from '../scheduler/types.ts';
import { unstaffedEpics, type Unstaffed } from '../scheduler/unstaffed.ts';
import type { Store } from '../store/index.ts';
import type { Waiting } from './orchestrator.ts';
import { mainChanges } from './merge.ts';
import { schedulerConfigOf } from './schedulerConfig.ts';

export interface DryRun {
  readonly dry_run: true;
  /** What the pass would do, in decide()'s order, each with its description. */
  readonly actions: readonly (Action & { readonly description: string })[];
  readonly waiting: readonly Waiting[];
  readonly unstaffed: readonly Unstaffed[];
  /** Agent runs recorded as running now (they keep their epics busy). */
  readonly running: number;
}

/** The pass decide() would take at `now`, from the store's snapshot (read by its clock); reads the store only. */
export async function dryRun(store: Store, mainRoot: string, config: RunConfig, now = new Date()): Promise<DryRun> {
  const snapshot = await store.schedulerSnapshot();
  const scheduler = schedulerConfigOf(config, mainRoot);
  const decided = decide(snapshot, scheduler, now);
  const waiting: Waiting[] = [];
  // As the pass does: a local merge waits while the main worktree has uncommitted changes.
  const dirty = config.merge !== 'pr' && decided.some((a) => a.kind === 'merge') ? await mainChanges(mainRoot).catch(() => []) : [];
  const actions = dirty.length === 0 ? decided : decided.filter((a) => a.kind !== 'merge');
  for (const a of decided) if (a.kind === 'merge' && dirty.length > 0) waiting.push({ epic_id: a.epicId, kind: 'person', message: MESSAGES.mainDirty(dirty), until: null });
  const acted = new Set<string>();
  for (const r of snapshot.runs) if (r.epicId) acted.add(r.epicId);
  for (const a of actions) {
    if (a.kind === 'surface') waiting.push({ epic_id: a.epicId, kind: 'person', message: a.message, until: null });
    if (a.kind === 'wait') waiting.push({ epic_id: a.epicId, kind: 'backoff', message: a.message, until: a.until });
    if ('epicId' in a) acted.add(a.epicId);
  }
  return {
    dry_run: true,
    actions: actions.map((a) => ({ ...a, description: describeAction(a) })),
    waiting,
    unstaffed: unstaffedEpics(snapshot.epics, scheduler, acted),
    running: snapshot.runs.length,
  };
}

/** One line in words for an action, as the pass would log it. */
export function describeAction(a: Action): string {
  switch (a.kind) {
    case 'start_epic': return `${a.epicId}: start the epic (ready → in_progress) in its own worktree`;
    case 'run': return `${a.epicId}: start ${ROLE_NAMES[a.role]}${a.stepAnchor ? ` on ${a.stepAnchor}` : ''}${a.worktree ? ` in ${a.worktree}` : ''} (${a.reason})`;
    case 'transition': return `${a.epicId}: ${a.event} (${a.reason})`;
    case 'setup': return `${a.epicId}: set up its new worktree`;
    case 'wait': return `${a.epicId}: wait until ${a.until} — ${a.message}`;
    case 'verify': return `${a.epicId}: run the verification commands`;
    case 'complete_mechanically': return `${a.epicId}: complete mechanically (summary, no agent session)`;
    case 'merge': return `${a.epicId}: merge`;
    case 'check_pr': return `${a.epicId}: ask whether its pull request was merged`;
    case 'stop_run': return `stop run #${a.runId}: ${a.reason}`;
    case 'surface': return `${a.epicId}: waits for a person — ${a.message}`;
  }
}
