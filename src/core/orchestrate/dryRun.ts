/**
 * `orchestrate --dry-run`: what one pass of the scheduler would do now, from the same snapshot and
 * the same decide(), without doing any of it (no claim, no worktree, no agent, no write).
 */
import { ROLE_NAMES } from '../epics/transitions.ts';
import { filesAwareOf, type RunConfig } from '../runs/runConfig.ts';
import { decide } from '../scheduler/decide.ts';
import { UNDER_WAY } from '../scheduler/filesRule.ts';
import { MESSAGES } from '../scheduler/rules.ts';
import type { Action, SchedulerSnapshot } from '../scheduler/types.ts';
import { unstaffedEpics, type Unstaffed } from '../scheduler/unstaffed.ts';
import type { Store } from '../store/index.ts';
import { admissionHold } from '../scheduler/admission.ts';
import { conflictsAhead } from './conflictsAhead.ts';
import { admissionOf } from './fleetConfig.ts';
import { readMachine } from './machine.ts';
import { mainChanges } from './merge.ts';
import { waitingOf, type Waiting } from './orchestrator.ts';
import { schedulerConfigOf } from './schedulerConfig.ts';
import { StepFiles, type ConflictWith } from './stepFiles.ts';

export interface DryRun {
  readonly dry_run: true;
  /** What the pass would do, in decide()'s order, each with its description. */
  readonly actions: readonly (Action & { readonly description: string })[];
  readonly waiting: readonly Waiting[];
  readonly unstaffed: readonly Unstaffed[];
  /** Agent runs recorded as running now (they keep their epics busy). */
  readonly running: number;
  /** Conflicts ahead of each epic under way, from test merges made now (docs/files.md). */
  readonly conflicts_ahead: readonly {
    readonly epic_id: string;
    readonly with: string;
    readonly files: readonly string[];
  }[];
}

/** The pass decide() would take at `now`, from the store's snapshot (read by its clock); reads the store only. */
export async function dryRun(store: Store, mainRoot: string, config: RunConfig, now = new Date()): Promise<DryRun> {
  const stored = await store.schedulerSnapshot();
  // Git failing to answer leaves the files out, as a pass would (docs/files.md).
  const conflicts = await conflictsNow(stored, mainRoot).catch(() => []);
  const annotated = filesAwareOf(config)
    ? await new StepFiles(store, mainRoot).annotate(stored, betweenEpics(stored, conflicts)).catch(() => stored)
    : stored;
  // Admission judges the machine as a pass would now (a dry run has no heavy work of its own under way).
  const admission = admissionHold(readMachine(), admissionOf(config));
  const snapshot = { ...annotated, fleet: { admission, heavy: { verification: 0, setup: 0 } } };
  const scheduler = schedulerConfigOf(config, mainRoot);
  const decided = decide(snapshot, scheduler, now);
  const waiting: Waiting[] = [];
  // As the pass does: a local merge waits while the main worktree has uncommitted changes.
  const dirty =
    config.merge !== 'pr' && decided.some((a) => a.kind === 'merge') ? await mainChanges(mainRoot).catch(() => []) : [];
  const actions = dirty.length === 0 ? decided : decided.filter((a) => a.kind !== 'merge');
  for (const a of decided)
    if (a.kind === 'merge' && dirty.length > 0)
      waiting.push({ epic_id: a.epicId, kind: 'person', message: MESSAGES.mainDirty(dirty), until: null });
  const acted = new Set<string>();
  for (const r of snapshot.runs) if (r.epicId) acted.add(r.epicId);
  for (const a of actions) {
    const waits = waitingOf(a);
    if (waits && a.kind !== 'check_pr') waiting.push(waits);
    if ('epicId' in a) acted.add(a.epicId);
  }
  return {
    dry_run: true,
    actions: actions.map((a) => ({ ...a, description: describeAction(a) })),
    waiting,
    unstaffed: unstaffedEpics(snapshot.epics, scheduler, acted),
    running: snapshot.runs.length,
    conflicts_ahead: conflicts,
  };
}

/**
 * What the scheduler would hold an epic back for now (`epic show`'s `waiting`): the person's queue,
 * the machine, a slot, the daily budget — the waits of decide() on the store's snapshot, in the
 * words a pass gives them (the editor's row shows the same from its scheduler's pass). No git.
 */
export async function epicHolds(store: Store, mainRoot: string, config: RunConfig, epicId: string, now = new Date()) {
  const stored = await store.schedulerSnapshot();
  const admission = admissionHold(readMachine(), admissionOf(config));
  const snapshot = { ...stored, fleet: { admission, heavy: { verification: 0, setup: 0 } } };
  return decide(snapshot, schedulerConfigOf(config, mainRoot), now)
    .filter((a) => a.kind === 'wait' && a.epicId === epicId && (a.hold !== undefined || a.dailyBudget !== undefined))
    .map((a) => waitingOf(a))
    .filter((w): w is Waiting => w !== null);
}

/** Every epic under way test-merged now against the default branch and the others (git writes objects only). */
async function conflictsNow(snapshot: SchedulerSnapshot, mainRoot: string): Promise<DryRun['conflicts_ahead']> {
  const ids = snapshot.epics
    .filter((e) => UNDER_WAY.includes(e.status))
    .map((e) => e.id)
    .sort();
  const out: { epic_id: string; with: string; files: readonly string[] }[] = [];
  for (const id of ids) for (const c of await conflictsAhead(mainRoot, id, ids)) out.push({ epic_id: id, ...c });
  return out;
}

function betweenEpics(snapshot: SchedulerSnapshot, conflicts: DryRun['conflicts_ahead']): Map<string, ConflictWith[]> {
  const ids = new Set(snapshot.epics.map((e) => e.id));
  const out = new Map<string, ConflictWith[]>();
  for (const c of conflicts)
    if (ids.has(c.with)) out.set(c.epic_id, [...(out.get(c.epic_id) ?? []), { epicId: c.with, files: c.files }]);
  return out;
}

/** One line in words for an action, as the pass would log it. */
export function describeAction(a: Action): string {
  switch (a.kind) {
    case 'start_epic':
      return `${a.epicId}: start the epic (ready → in_progress) in its own worktree`;
    case 'run':
      return `${a.epicId}: start ${ROLE_NAMES[a.role]}${a.stepAnchor ? ` on ${a.stepAnchor}` : ''}${a.worktree ? ` in ${a.worktree}` : ''} (${a.reason})`;
    case 'transition':
      return `${a.epicId}: ${a.event} (${a.reason})`;
    case 'setup':
      return `${a.epicId}: set up its new worktree`;
    case 'wait':
      return a.until === null || a.dailyBudget
        ? `${a.epicId}: ${a.message}`
        : `${a.epicId}: wait until ${a.until} — ${a.message}`;
    case 'verify':
      return `${a.epicId}: run the verification commands`;
    case 'complete_mechanically':
      return `${a.epicId}: complete mechanically (summary, no agent session)`;
    case 'merge':
      return `${a.epicId}: merge`;
    case 'check_pr':
      return `${a.epicId}: ask whether its pull request was merged`;
    case 'stop_run':
      return `stop run #${a.runId}: ${a.reason}`;
    case 'surface':
      return `${a.epicId}: waits for a person — ${a.message}`;
  }
}
