/**
 * The scheduler's decision function (docs/scheduler.md): snapshot, configuration and time in, actions out.
 * Pure and deterministic: no database, no I/O, no clock; the same input gives the same list.
 */
import { BUILDING_ROLE, ROLE_REGISTRY } from '../../shared/roles.ts';
import { dailyHold, gateEpicBudget } from './budgetRule.ts';
import { gateFaults } from './faults.ts';
import { builtStep, busySteps, filesChoice, goesFirst } from './filesRule.ts';
import { fleetHold, fleetPass, fleetTake } from './fleetRule.ts';
import { hasCommand, intentFor } from './rules.ts';
import type { Action, EpicSnapshot, RunSnapshot, SchedulerConfig, SchedulerSnapshot } from './types.ts';

/**
 * Epics by priority (P0 first), then id; plain code-unit order so no locale can change it. With
 * files-aware scheduling the epics under way take their places in the order they go first where
 * files meet (goesFirst): the one the others wait for takes a free slot first (docs/files.md); the
 * rest keep theirs.
 */
export function scheduleOrder(epics: readonly EpicSnapshot[]): EpicSnapshot[] {
  const sorted = [...epics].sort((a, b) => compare(a.priority, b.priority) || compare(a.id, b.id));
  const places = sorted.flatMap((e, i) => (e.files ? [i] : []));
  const underWay = places
    .map((i) => sorted[i] as EpicSnapshot)
    .sort((a, b) => (goesFirst(a, b) ? -1 : goesFirst(b, a) ? 1 : 0));
  places.forEach((place, k) => (sorted[place] = underWay[k] as EpicSnapshot));
  return sorted;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The run's timeout: its role's, else the default. */
export function runTimeoutMs(run: RunSnapshot, config: SchedulerConfig): number {
  return config.timeoutsMs?.[run.role] ?? config.runTimeoutMs;
}

/**
 * True when the run is still going past its timeout and the kill grace (`springfield run` ends its
 * own agent at the timeout; this is the backstop for a supervisor that did not), at `now`. An
 * unreadable start never times out.
 */
export function isTimedOut(run: RunSnapshot, config: SchedulerConfig, now: Date): boolean {
  const started = Date.parse(run.startedAt);
  return (
    Number.isFinite(started) &&
    now.getTime() - started > runTimeoutMs(run, config) + (config.killGraceMs ?? 0) + STOP_MARGIN_MS
  );
}

/** How long after its own timeout and grace a run's supervisor has to record the end before the scheduler stops it. */
const STOP_MARGIN_MS = 30_000;

/**
 * The actions for this tick: stop_run for each timed-out run (by id), then at most one action per
 * epic in priority order. Agent runs, and epic starts when Ralph has a command, take free slots; a
 * role that keeps failing waits out its backoff, then blocks the epic (gateFaults); a builder whose
 * step's files meet another epic's work builds another ready step meanwhile, else waits, as does a
 * merge that must come second (filesChoice, docs/files.md). A run on an epic whose spend reached its
 * budget pauses the epic instead, and while the daily budget is spent nothing that starts an agent is
 * taken (docs/budgets.md). The fleet holds heavy work while the machine has no room, slots are full
 * or the person's queue is (fleetRule.ts).
 */
export function decide(snapshot: SchedulerSnapshot, config: SchedulerConfig, now: Date): Action[] {
  const actions: Action[] = [];
  const busy = new Set<string>();
  let live = 0;
  for (const run of [...snapshot.runs].sort((a, b) => a.id - b.id)) {
    if (run.epicId !== null) busy.add(run.epicId);
    if (isTimedOut(run, config, now)) {
      actions.push({ kind: 'stop_run', runId: run.id, reason: timeoutReason(run, config) });
    } else if (ROLE_REGISTRY[run.role].kind !== 'scheduler') {
      live += 1;
    }
  }
  const limit = Number.isNaN(config.maxParallelAgents) ? 0 : Math.floor(config.maxParallelAgents);
  let free = Math.max(0, limit - live);
  const busyFiles = busySteps(snapshot);
  const seen = new Set<string>();
  const fleet = fleetPass(snapshot, live, config);
  for (const epic of scheduleOrder(snapshot.epics)) {
    if (seen.has(epic.id)) continue;
    seen.add(epic.id);
    // One agent per epic: its worktree is shared, so nothing else starts while a run (even one being
    // stopped) or its verification is under way there.
    if (busy.has(epic.id) || epic.verification.running) continue;
    const intent = intentFor(epic, config, now);
    if (intent === null) continue;
    const gated = gateFaults(epic, gateEpicBudget(epic, intent, config), config, now);
    const held = filesChoice(epic, gated, snapshot.epics, busyFiles);
    const daily = dailyHold(epic, held, config, snapshot.today) ?? held;
    const action = daily.kind === 'wait' ? daily : (fleetHold(fleet, epic, daily, config) ?? daily);
    const needsSlot = action.kind === 'run' || (action.kind === 'start_epic' && hasCommand(config, BUILDING_ROLE));
    if (needsSlot) {
      if (free <= 0) continue;
      free -= 1;
    }
    fleetTake(fleet, action, config);
    const built = builtStep(epic, action);
    if (built) busyFiles.push(built);
    actions.push(action);
  }
  return actions;
}

function timeoutReason(run: RunSnapshot, config: SchedulerConfig): string {
  const ms = runTimeoutMs(run, config);
  const minutes = Math.round(ms / 60_000);
  const limit = minutes >= 1 ? `${minutes} min` : `${Math.round(ms / 1000)} s`;
  return `${run.role} run ${run.id}${run.epicId ? ` for ${run.epicId}` : ''} outlived its timeout of ${limit}`;
}
