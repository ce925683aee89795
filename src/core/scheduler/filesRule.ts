/**
 * Files-aware scheduling (docs/files.md): a builder does not start on a step whose files meet those
 * of a step another epic is building, nor those an epic that goes first has changed or will change
 * before it merges; and of two verified epics whose branches conflict, the one that goes first
 * merges first. Pure: the files come in the snapshot (EpicSnapshot.files), added by the orchestrator.
 */
import type { EpicStatus } from '../epics/transitions.ts';
import { sharedFile } from './fileGlobs.ts';
import { byAge } from './waves.ts';
import type { EpicAction } from './rules.ts';
import type { EpicFiles, EpicSnapshot, FileShare, SchedulerSnapshot } from './types.ts';
import { BUILDING_ROLE, MERGING_ROLE } from '../../shared/roles.ts';

/** A step being built now (a live Ralph run or a live claim), and the files it touches. */
export interface BusyStep {
  readonly epicId: string;
  readonly stepAnchor: string | null;
  readonly files: readonly string[];
}

/** Epics whose branches hold work that is not merged yet and still moves towards a merge. */
export const UNDER_WAY: readonly EpicStatus[] = ['in_progress', 'implemented', 'verified'];

/**
 * Of two epics whose files meet, whether `a` goes before `b`: the higher priority, then the lower
 * wave (waves.ts), then the older, then the lower id. A total order, so no two epics ever wait for
 * each other.
 */
export function goesFirst(a: EpicSnapshot, b: EpicSnapshot): boolean {
  if (a.priority !== b.priority) return a.priority < b.priority;
  const wa = a.files?.wave ?? 0;
  const wb = b.files?.wave ?? 0;
  if (wa !== wb) return wa < wb;
  return byAge(a, b) < 0;
}

/** The steps being built now, from live Ralph runs and live claims, with the files the snapshot knows for them. */
export function busySteps(snapshot: SchedulerSnapshot): BusyStep[] {
  const byId = new Map(snapshot.epics.map((e) => [e.id, e]));
  const out: BusyStep[] = [];
  const seen = new Set<string>();
  const add = (epicId: string, stepAnchor: string | null) => {
    const key = `${epicId}\0${stepAnchor ?? ''}`;
    const files = byId.get(epicId)?.files;
    if (seen.has(key) || !files) return;
    seen.add(key);
    // A run on the whole epic (Bart's findings) touches what the epic changed.
    out.push({ epicId, stepAnchor, files: stepAnchor === null ? files.changed : (files.openSteps[stepAnchor] ?? []) });
  };
  for (const run of [...snapshot.runs].sort((a, b) => a.id - b.id))
    if (run.role === BUILDING_ROLE && run.epicId !== null) add(run.epicId, run.stepAnchor);
  for (const epic of snapshot.epics) for (const anchor of epic.steps.claimedLive) add(epic.id, anchor);
  return out;
}

/** The step `action` would have built, for the busy list of the rest of the pass; null for any other action. */
export function builtStep(epic: EpicSnapshot, action: EpicAction): BusyStep | null {
  if (action.kind !== 'run' || action.role !== BUILDING_ROLE || !epic.files) return null;
  const files = action.stepAnchor === null ? epic.files.changed : (epic.files.openSteps[action.stepAnchor] ?? []);
  return { epicId: epic.id, stepAnchor: action.stepAnchor, files };
}

/**
 * A wait in place of `action` when its files meet another epic's work (a builder's step, or a
 * merge that must come second), else null. Steps with no known files are never held.
 */
export function filesHold(
  epic: EpicSnapshot,
  action: EpicAction,
  epics: readonly EpicSnapshot[],
  busy: readonly BusyStep[],
): EpicAction | null {
  if (!epic.files) return null;
  let share: FileShare | null = null;
  let why = '';
  if (action.kind === 'run' && action.role === BUILDING_ROLE && action.stepAnchor !== null) {
    const mine = epic.files.openSteps[action.stepAnchor] ?? [];
    if (mine.length === 0) return null;
    [share, why] = builderShare(epic, mine, epics, busy);
  } else if (action.kind === 'merge') {
    [share, why] = mergeShare(epic, epics);
  }
  if (!share) return null;
  const role = action.kind === 'merge' ? MERGING_ROLE : BUILDING_ROLE;
  const step = share.stepAnchor ? ` ${share.stepAnchor}` : '';
  return {
    kind: 'wait',
    epicId: epic.id,
    role,
    until: null,
    message: `waiting: shares ${share.file} with ${share.epicId}${step}${why}`,
    shares: share,
  };
}

/**
 * filesHold, except that a builder held on its step builds another ready step of the epic meanwhile
 * if one is free (its files meet nothing, or none are known): a held epic keeps working.
 */
export function filesChoice(
  epic: EpicSnapshot,
  action: EpicAction,
  epics: readonly EpicSnapshot[],
  busy: readonly BusyStep[],
): EpicAction {
  const wait = filesHold(epic, action, epics, busy);
  if (!wait) return action;
  if (action.kind !== 'run' || action.stepAnchor === null || wait.kind !== 'wait') return wait;
  const held = action.stepAnchor;
  for (const anchor of epic.steps.ready) {
    if (anchor === held) continue;
    const other = { ...action, stepAnchor: anchor };
    if (filesHold(epic, other, epics, busy)) continue;
    const reason = action.reason === `build ${held}` ? `build ${anchor}` : action.reason;
    return { ...other, reason: `${reason}; ${held} is ${wait.message}` };
  }
  return wait;
}

function builderShare(
  epic: EpicSnapshot,
  mine: readonly string[],
  epics: readonly EpicSnapshot[],
  busy: readonly BusyStep[],
): [FileShare | null, string] {
  for (const b of busy) {
    if (b.epicId === epic.id) continue;
    const file = sharedFile(mine, b.files);
    if (file) return [{ file, epicId: b.epicId, stepAnchor: b.stepAnchor }, ''];
  }
  // An epic that goes first keeps what it will change and what it changed until it merges, so the
  // later one builds on top of it instead of beside it (rebased first: docs/files.md).
  for (const other of [...epics].sort((a, b) => (goesFirst(a, b) ? -1 : goesFirst(b, a) ? 1 : 0))) {
    if (other.id === epic.id || !other.files || !UNDER_WAY.includes(other.status) || !goesFirst(other, epic)) continue;
    for (const [anchor, files] of Object.entries(other.files.openSteps)) {
      const file = sharedFile(mine, files);
      if (file) return [{ file, epicId: other.id, stepAnchor: anchor }, ', which goes first'];
    }
    const file = sharedFile(mine, other.files.changed);
    if (file) return [{ file, epicId: other.id, stepAnchor: null }, ', which changed it and merges first'];
  }
  return [null, ''];
}

function mergeShare(epic: EpicSnapshot, epics: readonly EpicSnapshot[]): [FileShare | null, string] {
  for (const c of epic.files?.conflictsWith ?? []) {
    const other = epics.find((e) => e.id === c.epicId);
    if (!other || other.status !== 'verified' || !goesFirst(other, epic)) continue;
    return [
      { file: c.files[0] ?? '(its branch)', epicId: other.id, stepAnchor: null },
      ', which merges first (their branches conflict)',
    ];
  }
  return [null, ''];
}

/**
 * The epic's files without its hotspots: files whose conflicts resolve mechanically (a lockfile, a
 * changelog, a configured `mergeable` glob; docs/files.md) overlap nothing, so steps that share only
 * hotspots run side by side, and a conflict ahead only in hotspots orders no merge. Only literal
 * paths are dropped: a glob such as `src/**` still covers the rest of what it names.
 */
export function withoutHotspots(files: EpicFiles, hotspot: (path: string) => boolean): EpicFiles {
  const keep = (list: readonly string[]) => list.filter((f) => /[*?]/.test(f) || !hotspot(f));
  return {
    ...files,
    openSteps: Object.fromEntries(Object.entries(files.openSteps).map(([anchor, list]) => [anchor, keep(list)])),
    changed: keep(files.changed),
    // A conflict whose files git did not name still orders the merges.
    conflictsWith: files.conflictsWith.flatMap((c) =>
      c.files.length === 0 ? [c] : keep(c.files).length > 0 ? [{ ...c, files: keep(c.files) }] : [],
    ),
  };
}
